// The stock activities: reserve the order's units once per key, and release them once.
import { withTransaction } from '../platform/db/transaction.js';
import { failpoint } from '../platform/failpoint.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import { allocateStock, releaseStock } from '../orders/stock.js';
import { orderLine, setOrderStatus } from '../orders/orders.js';
import { currentActivityKey } from './activity-key.js';
import type { ActivityDeps } from './deps.js';
import type { ReleaseStockInput, ReserveStockInput } from './types.js';

export function createStockActivities(deps: ActivityDeps) {
  /**
   * Reserves the order's units before any money is touched: an order that cannot be filled never
   * reaches Stripe. The reservation is the stock the confirmed order keeps.
   */
  async function reserveStock(input: ReserveStockInput): Promise<{ replayed: boolean }> {
    const key = currentActivityKey(input.originalRunId);
    const result = await withTransaction(deps.db, async (client) => {
      const taken = await allocateStock(client, { idempotencyKey: key, orderId: input.orderId, sku: input.sku, quantity: input.quantity });
      await setOrderStatus(client, input.orderId, { status: 'reserved' });
      return taken;
    });
    failpoint('reserve.after-commit');
    return result;
  }

  /**
   * Returns the reservation's units to stock, exactly once, and closes its key: nothing reserved
   * yet returns nothing, and a reservation attempt still in flight can no longer take stock.
   */
  async function releaseStockActivity(input: ReleaseStockInput): Promise<{ released: number }> {
    const allocationKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.allocationActivityId });
    const releaseKey = currentActivityKey(input.originalRunId);
    const result = await withTransaction(deps.db, async (client) => {
      const line = await orderLine(client, input.orderId);
      // No order row: the order was never recorded, so nothing was reserved for it.
      if (!line) return { released: 0 };
      return releaseStock(client, { allocationKey, releaseKey, orderId: input.orderId, ...line });
    });
    failpoint('release-stock.after-commit');
    return result;
  }

  return { reserveStock, releaseStock: releaseStockActivity };
}
