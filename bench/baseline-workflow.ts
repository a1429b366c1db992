import { proxyActivities, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { ActivityId } from '../src/domain/activity-ids.js';
import type { OrderInput } from '../src/domain/order-input.js';
import type { OrderResult, OrderStatus } from '../src/domain/order-result.js';
import { FORWARD_ACTIVITY_OPTIONS, PAYMENT_ACTIVITY_OPTIONS } from '../src/workflows/activity-options.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../src/temporal/search-attributes.js';
import type { BaselineActivities } from './baseline-activities.js';

const forward = proxyActivities<BaselineActivities>(FORWARD_ACTIVITY_OPTIONS);
const payments = proxyActivities<BaselineActivities>(PAYMENT_ACTIVITY_OPTIONS);

/**
 * The benchmark's ceiling: the saga's success path as Temporal sees it (the same four
 * activities with the same IDs and options, the same search-attribute upserts and details)
 * over activities that do nothing. Whatever it cannot exceed, the saga cannot either.
 * Bundled on its own by the benchmark; it never ships in the production bundle.
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

  setCurrentDetails(`**charging** · order ${order.orderId}`);
  const charge = await payments.chargePayment.executeWithOptions({ activityId: ActivityId.chargePayment, summary: 'charge' }, [
    { order, workflowId, originalRunId },
  ]);
  status('paid');

  setCurrentDetails(`**allocating-stock** · order ${order.orderId}`);
  await forward.allocateStock.executeWithOptions({ activityId: ActivityId.allocateStock, summary: 'allocate' }, [
    { orderId: order.orderId, sku: order.sku, quantity: order.quantity, originalRunId },
  ]);
  status('allocated');

  setCurrentDetails(`**confirming** · order ${order.orderId}`);
  await forward.confirmOrder.executeWithOptions({ activityId: ActivityId.confirmOrder, summary: 'confirm' }, [{ orderId: order.orderId }]);
  status('completed');
  return { status: 'completed', orderId: order.orderId, paymentIntentId: charge.paymentIntentId, refundId: null, reason: null };
}
