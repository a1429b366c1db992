// The early fraud warning workflow's activities: decide whether the warning's charge is refunded
// (and reserve what is left of it), and announce the refund once it is made.
import { ApplicationFailure } from '@temporalio/activity';
import { orderDisputes, orderOfPaymentIntent } from '../money/payments/dispute-protocol.js';
import { findRefundRequestById, reserveRemainingRefund } from '../money/payments/refund-requests.js';
import { withTransaction } from '../platform/db/transaction.js';
import { announceFraudWarningRefunded } from '../messaging/outbox/order-events.js';
import { orderLine, orderProgress } from '../orders/orders.js';
import type { ActivityDeps } from './deps.js';

/** What a warning calls for: a refund of what is left (already reserved), or nothing, and why. */
export type FraudWarningPlan =
  | { action: 'refund'; orderId: string; refundRequestId: string; amount: number }
  | { action: 'none'; orderId: string | null; reason: string };

/** The refund request an early fraud warning makes: one per warning, however often it arrives. */
export function fraudWarningRefundRequestId(warningId: string): string {
  return `rfd_efw_${warningId}`;
}

/** Statuses an order passes through before it is confirmed: the warning waits for the confirmation. */
const NOT_YET_CONFIRMED = new Set(['pending', 'reserved', 'authorized', 'paid']);

export function createFraudWarningActivities(deps: ActivityDeps) {
  /**
   * Reads the warning from Stripe and decides. A refund is planned only for an actionable warning
   * on a completed order with no dispute (a disputed charge is the dispute workflow's, and Stripe
   * would refuse its refund), and only for what is still refundable, reserved here from the
   * order's refund budget under the warning's refund request.
   */
  async function planFraudWarningRefund(input: { warningId: string }): Promise<FraudWarningPlan> {
    const warning = await deps.stripe.radar.earlyFraudWarnings.retrieve(input.warningId);
    const paymentIntentId = typeof warning.payment_intent === 'string' ? warning.payment_intent : (warning.payment_intent?.id ?? null);
    const orderId = paymentIntentId ? await orderOfPaymentIntent(deps.db, paymentIntentId) : null;
    if (!orderId) return { action: 'none', orderId: null, reason: `warning ${input.warningId} is of no order of ours` };
    const refundRequestId = fraudWarningRefundRequestId(input.warningId);
    const planned = await findRefundRequestById(deps.db, refundRequestId);
    if (planned) return { action: 'refund', orderId, refundRequestId, amount: planned.amount };
    if ((await orderDisputes(deps.db, orderId)).length > 0) return { action: 'none', orderId, reason: 'the charge is disputed: the dispute workflow works it' };
    if (!warning.actionable) return { action: 'none', orderId, reason: 'the warning is no longer actionable (the charge is refunded)' };
    const progress = await orderProgress(deps.db, orderId);
    // Retried until the saga confirms the order: the warning can arrive with the capture.
    if (progress && NOT_YET_CONFIRMED.has(progress.status)) throw new Error(`order ${orderId} is '${progress.status}'; waiting for it to complete`);
    if (progress?.status !== 'completed') return { action: 'none', orderId, reason: `order is '${progress?.status ?? 'unknown'}', not completed` };
    const line = await orderLine(deps.db, orderId);
    if (!line) throw ApplicationFailure.nonRetryable(`order ${orderId} has no record`, 'NeedsReview');
    const reserved = await reserveRemainingRefund(deps.db, { tenantId: line.tenantId, orderId, refundRequestId });
    if (reserved.kind === 'nothing-left') return { action: 'none', orderId, reason: 'nothing is left to refund' };
    if (reserved.kind === 'not-captured') return { action: 'none', orderId, reason: 'the ledger has no capture for the order' };
    return { action: 'refund', orderId, refundRequestId, amount: reserved.request.amount };
  }

  /** `order.fraud_warning_refunded`, once per warning, with the refund its request made. */
  async function announceFraudWarningRefund(input: { warningId: string; orderId: string; refundRequestId: string; paymentIntentId: string }): Promise<boolean> {
    return withTransaction(deps.db, async (client) => {
      const request = await findRefundRequestById(client, input.refundRequestId);
      if (request?.status !== 'succeeded' || !request.stripeRefundId) return false;
      return announceFraudWarningRefunded(client, input.orderId, input.warningId, {
        amountMinor: request.amount,
        currency: request.currency,
        refundId: request.stripeRefundId,
        paymentIntentId: input.paymentIntentId,
        refundRequestId: request.refundRequestId,
      });
    });
  }

  return { planFraudWarningRefund, announceFraudWarningRefund };
}
