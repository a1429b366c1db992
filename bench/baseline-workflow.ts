// The benchmark's ceiling workflow: the saga's success path as Temporal sees it, over activities
// that do nothing; bundled only by the benchmark, never shipped.
import { CancellationScope, condition, proxyActivities, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { ActivityId } from '../src/domain/activity-ids.js';
import type { OrderInput } from '../src/domain/order-input.js';
import type { OrderResult, OrderStatus } from '../src/domain/order-result.js';
import { CAPTURE_ACTIVITY_OPTIONS, FORWARD_ACTIVITY_OPTIONS, PAYMENT_ACTIVITY_OPTIONS } from '../src/workflows/activity-options.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../src/platform/temporal/search-attributes.js';
import type { BaselineActivities } from './baseline-activities.js';

const forward = proxyActivities<Pick<BaselineActivities, 'recordOrder' | 'reserveStock' | 'confirmOrder'>>(FORWARD_ACTIVITY_OPTIONS);
const authorization = proxyActivities<Pick<BaselineActivities, 'authorizePayment'>>(PAYMENT_ACTIVITY_OPTIONS);
const capture = proxyActivities<Pick<BaselineActivities, 'capturePayment'>>(CAPTURE_ACTIVITY_OPTIONS);

/**
 * The benchmark's ceiling: the saga's success path as Temporal sees it (the
 * same five activities with the same IDs and options, the capture raced against its deadline
 * timer, the same search-attribute upserts and details) over activities that do nothing.
 * Whatever it cannot exceed, the saga cannot either. Bundled on its own by the benchmark; it
 * never ships in the production bundle.
 */
export async function baselineSaga(order: OrderInput): Promise<OrderResult> {
  const { workflowId, originalExecutionRunId: originalRunId } = workflowInfo();
  const status = (value: OrderStatus) => {
    upsertSearchAttributes([{ key: OrderStatusAttribute, value }]);
  };
  upsertSearchAttributes([
    { key: OrderIdAttribute, value: order.orderId },
    { key: OrderStatusAttribute, value: 'pending' },
  ]);

  setCurrentDetails(`**recording-order** · order ${order.orderId}`);
  await forward.recordOrder.executeWithOptions({ activityId: ActivityId.recordOrder, summary: 'record order' }, [{ order, workflowId }]);

  setCurrentDetails(`**reserving-stock** · order ${order.orderId}`);
  await forward.reserveStock.executeWithOptions({ activityId: ActivityId.reserveStock, summary: 'reserve' }, [
    { orderId: order.orderId, sku: order.sku, quantity: order.quantity, originalRunId },
  ]);
  status('reserved');

  setCurrentDetails(`**authorizing** · order ${order.orderId}`);
  const hold = await authorization.authorizePayment.executeWithOptions({ activityId: ActivityId.authorizePayment, summary: 'authorize' }, [
    { order, workflowId, originalRunId },
  ]);
  status('authorized');

  setCurrentDetails(`**capturing** · order ${order.orderId}`);
  const attempt = new CancellationScope();
  const capturing = attempt.run(() =>
    capture.capturePayment.executeWithOptions({ activityId: ActivityId.capturePayment, summary: 'capture' }, [
      { orderId: order.orderId, workflowId, originalRunId, hold },
    ]),
  );
  let ended = false;
  void capturing.then(
    () => (ended = true),
    () => (ended = true),
  );
  await CancellationScope.nonCancellable(() => condition(() => ended, hold.captureWithinMs, { summary: 'capture deadline' }));
  const captured = await capturing;
  status('paid');

  setCurrentDetails(`**confirming** · order ${order.orderId}`);
  await forward.confirmOrder.executeWithOptions({ activityId: ActivityId.confirmOrder, summary: 'confirm' }, [{ orderId: order.orderId }]);
  status('completed');
  return { status: 'completed', orderId: order.orderId, paymentIntentId: captured.paymentIntentId, refundId: null, reason: null };
}
