// The benchmark's no-op reference workflows: the saga's success path as Temporal sees it, in its
// earlier shape (the fixed reference) and in its current one, over activities that do nothing;
// bundled only by the benchmark, never shipped.
import { CancellationScope, condition, proxyActivities, proxyLocalActivities, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { ActivityId } from '../src/domain/activity-ids.js';
import type { OrderInput } from '../src/domain/order-input.js';
import type { OrderResult, OrderStatus } from '../src/domain/order-result.js';
import { CAPTURE_ACTIVITY_OPTIONS, FORWARD_ACTIVITY_OPTIONS, PAYMENT_ACTIVITY_OPTIONS, POSTGRES_STEP_OPTIONS } from '../src/workflows/activity-options.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../src/platform/temporal/search-attributes.js';
import type { BaselineActivities } from './baseline-activities.js';

const forward = proxyActivities<Pick<BaselineActivities, 'recordOrder' | 'reserveStock' | 'confirmOrder'>>(FORWARD_ACTIVITY_OPTIONS);
const authorization = proxyActivities<Pick<BaselineActivities, 'authorizePayment'>>(PAYMENT_ACTIVITY_OPTIONS);
const capture = proxyActivities<Pick<BaselineActivities, 'capturePayment'>>(CAPTURE_ACTIVITY_OPTIONS);
const postgres = proxyLocalActivities<Pick<BaselineActivities, 'recordOrderAndReserveStock' | 'confirmOrder'>>(POSTGRES_STEP_OPTIONS);

/**
 * The fixed reference: the saga's success path as Temporal saw it before its Postgres steps
 * became local activities (five activities with the same IDs and options, six workflow tasks,
 * the capture raced against its deadline timer, a search-attribute upsert per step) over
 * activities that do nothing. Kept unchanged, so the saga's new shape is measured against the
 * old one's ceiling. Bundled on its own by the benchmark; it never ships in the production bundle.
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

/**
 * The ceiling of the saga's current shape: its success path as Temporal sees it now (record and
 * reserve as one local activity, the hold and the capture as activities (no deadline timer: the
 * capture checks its deadline itself), the confirmation as a local activity, upserts for the hold
 * and the end only)
 * over activities that do nothing. Whatever it cannot exceed, the saga cannot either.
 */
export async function newShapeBaselineSaga(order: OrderInput): Promise<OrderResult> {
  const { workflowId, originalExecutionRunId: originalRunId } = workflowInfo();
  const status = (value: OrderStatus) => {
    upsertSearchAttributes([{ key: OrderStatusAttribute, value }]);
  };

  setCurrentDetails(`**recording-order** · order ${order.orderId}`);
  await postgres.recordOrderAndReserveStock.executeWithOptions({ summary: 'record and reserve' }, [
    { order, workflowId, originalRunId, stepId: ActivityId.reserveStock },
  ]);

  setCurrentDetails(`**authorizing** · order ${order.orderId}`);
  const hold = await authorization.authorizePayment.executeWithOptions({ activityId: ActivityId.authorizePayment, summary: 'authorize' }, [
    { order, workflowId, originalRunId },
  ]);
  status('authorized');

  setCurrentDetails(`**capturing** · order ${order.orderId}`);
  const captured = await capture.capturePayment.executeWithOptions({ activityId: ActivityId.capturePayment, summary: 'capture' }, [
    { orderId: order.orderId, workflowId, originalRunId, hold },
  ]);

  setCurrentDetails(`**confirming** · order ${order.orderId}`);
  await postgres.confirmOrder.executeWithOptions({ summary: 'confirm' }, [{ orderId: order.orderId }]);
  status('completed');
  return { status: 'completed', orderId: order.orderId, paymentIntentId: captured.paymentIntentId, refundId: null, reason: null };
}
