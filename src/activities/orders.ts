// The order's own activities: confirm it, and move its status with the outbox event the move
// announces (its record is written with its reservation: stock.ts).
import { withTransaction } from '../platform/db/transaction.js';
import { OrderNotConfirmableError } from '../domain/failures.js';
import { failpoint } from '../platform/failpoint.js';
import { FAILED_ORDER_STATUSES } from '../messaging/order-event.js';
import { orderStatus, setOrderStatus } from '../orders/orders.js';
import { announceOrderFailed } from '../messaging/outbox/order-events.js';
import type { ActivityDeps } from './deps.js';
import type { OrderStatusChangeResult, SetOrderStatusInput } from './types.js';

export function createOrderActivities(deps: ActivityDeps) {
  return {
    /**
     * Marks the order completed: the last forward step. An order that has already ended
     * otherwise (a reset run replaying a compensated order) is not confirmed: the workflow must
     * not report completed what the books say was undone.
     */
    async confirmOrder(input: { orderId: string }): Promise<void> {
      if (await setOrderStatus(deps.db, input.orderId, { status: 'completed' })) {
        failpoint('confirm.after-commit');
        return;
      }
      const current = await orderStatus(deps.db, input.orderId);
      throw new OrderNotConfirmableError(`order ${input.orderId} cannot be confirmed from status '${current ?? 'unknown'}'`, { status: current });
    },
    /**
     * Moves the order to a compensation or terminal status, with the reason a person will read.
     * An order that ends declined, compensated or needs_review announces `order.failed` in the
     * same transaction. Answers whether the order moved, and its status after: an order whose
     * status does not allow the change (already past it, or ended otherwise) keeps its own.
     */
    async setOrderStatus(input: SetOrderStatusInput): Promise<OrderStatusChangeResult> {
      return withTransaction(deps.db, async (client) => {
        const moved = await setOrderStatus(client, input.orderId, { status: input.status, reason: input.reason });
        if ((FAILED_ORDER_STATUSES as readonly string[]).includes(input.status)) await announceOrderFailed(client, input.orderId);
        return { moved, status: moved ? input.status : await orderStatus(client, input.orderId) };
      });
    },
  };
}
