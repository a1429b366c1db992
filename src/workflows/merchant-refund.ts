// The merchant refund's workflow: one refund request of a completed order, one workflow, one
// activity call under a key derived from this workflow's original run ID.
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { MerchantRefundResult } from '../activities/merchant-refund.js';
import { ActivityId } from '../domain/activity-ids.js';
import { COMPENSATION_ACTIVITY_OPTIONS } from './activity-options.js';

export interface MerchantRefundRequest {
  orderId: string;
  /** The API's refund request ID (`rfd_...`): with the order ID, the workflow's identity. */
  refundRequestId: string;
  amount: number;
}

// A refund retries like a compensation: until it succeeds or fails for good. It sees its one activity only.
const refunds = proxyActivities<Pick<OrderActivities, 'merchantRefund'>>(COMPENSATION_ACTIVITY_OPTIONS);

export const MERCHANT_REFUND_WORKFLOW_PREFIX = 'order-refund-';

/** A refund request's workflow ID: a retried API call, or a reader of the request, finds the same run. */
export function merchantRefundWorkflowId(orderId: string, refundRequestId: string): string {
  return `${MERCHANT_REFUND_WORKFLOW_PREFIX}${orderId}-${refundRequestId}`;
}

/**
 * A merchant-initiated refund of a completed order, in a workflow of its own: the order's saga
 * (and its recorded histories) stay as they are, and each refund request gets one workflow ID,
 * `order-refund-<orderId>-<refundRequestId>`, so a retried API call attaches to it.
 */
export async function merchantRefund(request: MerchantRefundRequest): Promise<MerchantRefundResult> {
  // PINNED, like the saga (the worker's default): it moves money, and its key is derived from this
  // run's identity and activity ID, so it finishes on the code that started it. It lasts seconds,
  // so pinning holds an old build's workers no longer than a refund takes.
  const { workflowId, originalExecutionRunId } = workflowInfo();
  return refunds.merchantRefund.executeWithOptions(
    { activityId: ActivityId.merchantRefund, summary: `Stripe + ledger: merchant refund ${request.refundRequestId} of order ${request.orderId}` },
    [{ ...request, workflowId, originalRunId: originalExecutionRunId }],
  );
}
