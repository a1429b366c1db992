// The stock activities: record the order and reserve its units once per key (one transaction),
// and release them once.
import { OutOfStockError } from '../domain/failures.js';
import { withTransaction } from '../platform/db/transaction.js';
import { failpoint } from '../platform/failpoint.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import { allocateStock, releaseStock } from '../orders/stock.js';
import { orderLine, recordOrder, setOrderStatus } from '../orders/orders.js';
import type { ActivityDeps } from './deps.js';
import type { RecordAndReserveInput, ReleaseStockInput } from './types.js';

export function createStockActivities(deps: ActivityDeps) {
  /**
   * Records the order and reserves its units in one transaction: the saga's first step, always
   * the two together, so one commit and one round trip to the worker's database. A reused order ID
   * with another payload is refused (IdempotencyConflictError) with nothing written. An order that
   * cannot be filled keeps its record (the saga closes it compensated) and takes nothing: the
   * reservation alone rolls back, to a savepoint. The reservation's key is made from the step ID
   * it is handed, never from the running activity's own ID (a local activity's is a sequence number).
   * The reservation is the stock the confirmed order keeps.
   */
  async function recordOrderAndReserveStock(input: RecordAndReserveInput): Promise<{ replayed: boolean }> {
    const key = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.stepId });
    const { order } = input;
    const outcome = await withTransaction(deps.db, async (client) => {
      await recordOrder(client, order, input.workflowId);
      await client.query('savepoint reserve');
      try {
        const taken = await allocateStock(client, { idempotencyKey: key, orderId: order.orderId, sku: order.sku, quantity: order.quantity });
        await setOrderStatus(client, order.orderId, { status: 'reserved' });
        return taken;
      } catch (error) {
        if (!(error instanceof OutOfStockError)) throw error;
        await client.query('rollback to savepoint reserve');
        return error;
      }
    });
    if (outcome instanceof OutOfStockError) throw outcome;
    failpoint('reserve.after-commit');
    return outcome;
  }

  /**
   * Returns the reservation's units to stock, exactly once, and closes its key: nothing reserved
   * yet returns nothing, and a reservation attempt still in flight can no longer take stock.
   */
  async function releaseStockActivity(input: ReleaseStockInput): Promise<{ released: number }> {
    const allocationKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.allocationActivityId });
    // The release's step ID, not the running activity's: it runs as a local activity.
    const releaseKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.stepId });
    const result = await withTransaction(deps.db, async (client) => {
      const line = await orderLine(client, input.orderId);
      // No order row: the order was never recorded, so nothing was reserved for it.
      if (!line) return { released: 0 };
      return releaseStock(client, { allocationKey, releaseKey, orderId: input.orderId, ...line });
    });
    failpoint('release-stock.after-commit');
    return result;
  }

  return { recordOrderAndReserveStock, releaseStock: releaseStockActivity };
}
