import { recordOrder, setOrderStatus } from '../orders/orders.js';
import type { ActivityDeps } from './deps.js';
import { mappingFailures } from './failures.js';
import type { RecordOrderInput, SetOrderStatusInput } from './types.js';

export function createOrderActivities(deps: ActivityDeps) {
  return {
    /** Records the order before any money moves; the same order ID with another payload is refused. */
    async recordOrder(input: RecordOrderInput): Promise<void> {
      await mappingFailures(() => recordOrder(deps.db, input.order, input.workflowId));
    },
    /** Marks the order completed: the last forward step. */
    async confirmOrder(input: { orderId: string }): Promise<void> {
      await setOrderStatus(deps.db, input.orderId, { status: 'completed' });
    },
    /** Moves the order to a compensation or terminal status, with the reason a person will read. */
    async setOrderStatus(input: SetOrderStatusInput): Promise<void> {
      await setOrderStatus(deps.db, input.orderId, { status: input.status, reason: input.reason });
    },
  };
}
