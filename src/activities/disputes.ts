// The dispute workflow's activities: read the dispute from Stripe and record it through its
// protocol (src/money/payments/dispute-protocol.ts), send evidence, accept, and announce the deadline.
import { log } from '@temporalio/activity';
import { ActivityId } from '../domain/activity-ids.js';
import { NeedsReviewError } from '../domain/failures.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import {
  isClosed,
  orderOfPaymentIntent,
  recordDisputeSnapshot,
  recordEvidenceDue,
  snapshotOf,
  type DisputeCloser,
  type DisputeOutcome,
} from '../money/payments/dispute-protocol.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { failpoint } from '../platform/failpoint.js';
import type { ActivityDeps } from './deps.js';

/** The evidence fields the merchant's API takes, in Stripe's names. */
export const DISPUTE_EVIDENCE_FIELDS = [
  'product_description',
  'uncategorized_text',
  'customer_communication',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'cancellation_rebuttal',
  'shipping_carrier',
  'shipping_tracking_number',
  'shipping_date',
  'service_date',
] as const;
export type DisputeEvidenceField = (typeof DISPUTE_EVIDENCE_FIELDS)[number];
export type DisputeEvidence = Partial<Record<DisputeEvidenceField, string>>;

/** Where a dispute stands, as the workflow sees it: IDs, status and dates, nothing of the customer. */
export interface DisputeView {
  disputeId: string;
  orderId: string;
  status: string;
  isInquiry: boolean;
  closed: boolean;
  outcome: DisputeOutcome | null;
  /** `evidence_details.due_by`, in milliseconds since the epoch. */
  dueByMs: number | null;
  evidenceSubmitted: boolean;
  /** When the dispute was read, by the activity's clock: the workflow's waits are measured from it. */
  readAtMs: number;
}

export interface DisputeStepInput {
  disputeId: string;
  originalRunId: string;
}

export function createDisputeActivities(deps: ActivityDeps) {
  const keys = (originalRunId: string) => ({
    withdrawal: deriveIdempotencyKey({ runId: originalRunId, activityId: ActivityId.disputeWithdrawal }),
    fee: deriveIdempotencyKey({ runId: originalRunId, activityId: ActivityId.disputeFee }),
    reinstatement: deriveIdempotencyKey({ runId: originalRunId, activityId: ActivityId.disputeReinstatement }),
  });

  /**
   * Reads the dispute as Stripe has it now and records it: opened, its money booked, closed once
   * decided, in one transaction. `closer` says what this workflow did that decides the recorded
   * outcome of a lost dispute (the merchant accepted, the deadline policy did, or it was left to lose).
   */
  async function syncDispute(input: DisputeStepInput & { closer: DisputeCloser | null }): Promise<DisputeView> {
    const dispute = await deps.stripe.disputes.retrieve(input.disputeId);
    const snapshot = snapshotOf(dispute);
    const orderId = await orderOfPaymentIntent(deps.db, snapshot.paymentIntentId);
    if (!orderId) throw new NeedsReviewError(`dispute ${input.disputeId} is of PaymentIntent ${snapshot.paymentIntentId}, which paid for no order of ours`);
    const recorded = await recordDisputeSnapshot(deps.db, orderId, snapshot, keys(input.originalRunId), input.closer);
    failpoint('dispute.after-booking');
    return {
      disputeId: recorded.disputeId,
      orderId,
      status: recorded.status,
      isInquiry: recorded.isInquiry,
      closed: recorded.closedAt !== null || isClosed(snapshot.status),
      outcome: recorded.outcome,
      dueByMs: recorded.evidenceDueBy?.getTime() ?? null,
      evidenceSubmitted: recorded.evidenceSubmitted,
      readAtMs: Date.now(),
    };
  }

  /** Sends the merchant's evidence, and submits it when asked, under the submission's own key. */
  async function submitDisputeEvidence(input: DisputeStepInput & { submission: number; evidence: DisputeEvidence; submit: boolean }): Promise<void> {
    const key = deriveIdempotencyKey({ runId: input.originalRunId, activityId: `${ActivityId.submitDisputeEvidence}-${input.submission}` });
    try {
      await deps.stripe.disputes.update(input.disputeId, { evidence: input.evidence, submit: input.submit }, { idempotencyKey: key });
    } catch (error) {
      const classified = classifyStripeError(error);
      if (classified.kind === 'retryable') throw error;
      // Closed, or evidence already submitted: Stripe's answer is final; the caller learns it.
      throw new NeedsReviewError(`evidence for dispute ${input.disputeId} refused by Stripe: ${classified.kind === 'declined' ? classified.code : classified.message}`);
    }
    log.info('dispute evidence sent', { disputeId: input.disputeId, submitted: input.submit, idempotencyKey: key });
  }

  /** Accepts the dispute (Stripe's close). A dispute Stripe has already closed is left as it is. */
  async function acceptDispute(input: DisputeStepInput): Promise<void> {
    const key = deriveIdempotencyKey({ runId: input.originalRunId, activityId: ActivityId.acceptDispute });
    try {
      await deps.stripe.disputes.close(input.disputeId, {}, { idempotencyKey: key });
    } catch (error) {
      const classified = classifyStripeError(error);
      if (classified.kind === 'retryable') throw error;
      const current = await deps.stripe.disputes.retrieve(input.disputeId);
      if (isClosed(current.status)) return;
      throw new NeedsReviewError(`accepting dispute ${input.disputeId} refused by Stripe: ${classified.kind === 'declined' ? classified.code : classified.message}`);
    }
  }

  /** `order.dispute_evidence_due`, once, unless evidence is in or the dispute closed. */
  async function announceDisputeEvidenceDue(input: { disputeId: string }): Promise<boolean> {
    return recordEvidenceDue(deps.db, input.disputeId);
  }

  return { syncDispute, submitDisputeEvidence, acceptDispute, announceDisputeEvidenceDue };
}
