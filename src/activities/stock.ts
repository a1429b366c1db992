import { withTransaction } from '../db/transaction.js';
import { failpoint } from '../failpoints/failpoint.js';
import { deriveIdempotencyKey } from '../idempotency/idempotency-key.js';
import { allocateStock, releaseStock } from '../inventory/stock.js';
import { setOrderStatus } from '../orders/orders.js';
import { currentActivityKey } from './activity-key.js';
import type { ActivityDeps } from './deps.js';
import { mappingFailures } from './failures.js';
import type { AllocateStockInput, ReleaseStockInput } from './types.js';

export function createStockActivities(deps: ActivityDeps) {
  /** Takes the order's units from stock once; too little stock is a final OutOfStock. */
  async function allocateStockActivity(input: AllocateStockInput): Promise<{ replayed: boolean }> {
    const key = currentActivityKey(input.originalRunId);
    const result = await mappingFailures(() =>
      withTransaction(deps.db, async (client) => {
        const allocated = await allocateStock(client, {
          idempotencyKey: key,
          orderId: input.orderId,
          sku: input.sku,
          quantity: input.quantity,
        });
        await setOrderStatus(client, input.orderId, { status: 'allocated' });
        return allocated;
      }),
    );
    failpoint('allocate.after-commit');
    return result;
  }

  /** Returns the allocation's units to stock, exactly once; a no-op if nothing was allocated. */
  async function releaseStockActivity(input: ReleaseStockInput): Promise<{ released: number }> {
    const allocationKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.allocationActivityId });
    const releaseKey = currentActivityKey(input.originalRunId);
    const result = await withTransaction(deps.db, (client) => releaseStock(client, { allocationKey, releaseKey }));
    failpoint('release-stock.after-commit');
    return result;
  }

  return { allocateStock: allocateStockActivity, releaseStock: releaseStockActivity };
}
