// The early fraud warning workflow: one per Radar warning, which refunds what is still
// refundable of a captured, undisputed charge before a dispute can cost more.
import { ActivityFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { FraudWarningPlan } from '../activities/fraud-warnings.js';
import { ActivityId } from '../domain/activity-ids.js';
import { COMPENSATION_ACTIVITY_OPTIONS } from './activity-options.js';

export interface OrderFraudWarningInput {
  warningId: string;
  /** `refund` what is still refundable, or `ignore` the warning (recorded, nothing refunded). */
  policy: 'refund' | 'ignore';
}

export type FraudWarningOutcome =
  | { action: 'refunded'; orderId: string; refundRequestId: string; refundId: string; amount: number }
  | { action: 'none'; orderId: string | null; reason: string };

export const FRAUD_WARNING_WORKFLOW_PREFIX = 'order-fraud-warning-';

/** One workflow per warning, so every duplicate of its webhook finds the same run. */
export function fraudWarningWorkflowId(warningId: string): string {
  return `${FRAUD_WARNING_WORKFLOW_PREFIX}${warningId}`;
}

const steps = proxyActivities<Pick<OrderActivities, 'planFraudWarningRefund' | 'merchantRefund' | 'announceFraudWarningRefund'>>(COMPENSATION_ACTIVITY_OPTIONS);

/**
 * Plan (read the warning, decide, reserve what is left of the capture under the warning's refund
 * request), refund through the merchant refund protocol (its key from this run's original run ID;
 * its claim on the warning's refund request answers any second run), then announce
 * `order.fraud_warning_refunded`. A refund Stripe refuses (the charge got disputed meanwhile)
 * fails the request with its reason and ends here.
 */
export async function orderFraudWarning(input: OrderFraudWarningInput): Promise<FraudWarningOutcome> {
  if (input.policy === 'ignore') return { action: 'none', orderId: null, reason: 'EARLY_FRAUD_WARNING_POLICY is ignore' };
  const { workflowId, originalExecutionRunId: originalRunId } = workflowInfo();
  const plan: FraudWarningPlan = await steps.planFraudWarningRefund.executeWithOptions(
    { activityId: ActivityId.planFraudWarningRefund, summary: `Stripe + Postgres: plan early fraud warning ${input.warningId}` },
    [{ warningId: input.warningId }],
  );
  if (plan.action === 'none') return plan;
  let refund;
  try {
    refund = await steps.merchantRefund.executeWithOptions(
      { activityId: ActivityId.fraudWarningRefund, summary: `Stripe + ledger: refund ${plan.refundRequestId} of order ${plan.orderId}` },
      [{ orderId: plan.orderId, refundRequestId: plan.refundRequestId, amount: plan.amount, workflowId, originalRunId }],
    );
  } catch (error) {
    if (error instanceof ActivityFailure) return { action: 'none', orderId: plan.orderId, reason: error.cause?.message ?? error.message };
    throw error;
  }
  await steps.announceFraudWarningRefund.executeWithOptions(
    { activityId: ActivityId.announceFraudWarningRefunded, summary: `Outbox: early fraud warning refund of order ${plan.orderId}` },
    [{ warningId: input.warningId, orderId: plan.orderId, refundRequestId: plan.refundRequestId, paymentIntentId: refund.paymentIntentId }],
  );
  return { action: 'refunded', orderId: plan.orderId, refundRequestId: plan.refundRequestId, refundId: refund.refundId, amount: refund.amount };
}
