// The capture's compensation: refunds only money that was really captured, once, with the
// ledger's reversal.
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { ActivityId } from '../domain/activity-ids.js';
import { NeedsReviewError } from '../domain/failures.js';
import { failpoint } from '../platform/failpoint.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import {
  fenceCapture,
  readAuthorization,
  readCapture,
  recordCapture,
  recordRefund,
  refundRequest,
  registerCapture,
  registerRefund,
  stripePaymentOf,
  type Capture,
} from '../money/payments/payment-protocol.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { currentActivityKey } from './activity-key.js';
import { DEFAULT_KEY_RETENTION_MS, type ActivityDeps } from './deps.js';
import type { RefundCaptureInput, RefundCaptureResult } from './types.js';
import { countReplay } from '../platform/telemetry/activity-metrics.js';

/**
 * Refunds what the capture took: the compensation of the capture, registered before it runs.
 * Only captured money is refunded (Stripe keeps its fee on a refund; an uncaptured hold is voided
 * by the authorization's compensation instead). Three named phases:
 *   1. resolve the capture: from its key's record when it has an outcome; otherwise (the capture
 *      timed out, was cancelled, or its worker died) by asking Stripe: a capture Stripe made is
 *      recorded (the ledger's charge) before it is refunded, and a hold Stripe never captured has
 *      its capture key fenced, so no late attempt can capture after the saga decided it had not;
 *   2. register the refund's own key;
 *   3. create the Refund under that key and record it with the ledger's reversal, in one transaction.
 */
export function createRefundCapture(deps: ActivityDeps) {
  const retention = { retentionMs: deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS };

  async function refundCapture(input: RefundCaptureInput): Promise<RefundCaptureResult> {
    const refundKey = currentActivityKey(input.originalRunId);

    // Phase 1: what was captured?
    const resolved = await resolveCapture(input);
    if (!resolved) return { refundId: null, paymentIntentId: null, amount: 0, currency: null, resolvedBy: 'nothing-captured' };
    const { capture, resolvedBy } = resolved;

    // Phase 2: the refund's own key.
    const registered = await registerRefund(deps.db, refundKey, capture, retention);
    if (registered.stage === 'refunded') {
      log.info('refund answered from Postgres; Stripe not called', { idempotencyKey: refundKey });
      countReplay('ledger');
      return { ...registered.refund, resolvedBy };
    }

    // Phase 3: the Stripe call, then the refund and the ledger's reversal together.
    log.info('refunding capture', { idempotencyKey: refundKey, paymentIntentId: capture.paymentIntentId, orderId: input.orderId });
    const refund = await createRefund(input, refundKey, capture);
    failpoint('refund.after-stripe');
    const recorded = await recordRefund(deps.db, input.orderId, refundKey, {
      refundId: refund.id,
      paymentIntentId: capture.paymentIntentId,
      amount: refund.amount,
      currency: refund.currency,
    });
    failpoint('refund.after-ledger');
    return { ...recorded, resolvedBy };
  }

  async function resolveCapture(input: RefundCaptureInput): Promise<{ capture: Capture; resolvedBy: RefundCaptureResult['resolvedBy'] } | null> {
    const captureKey = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.captureActivityId });
    const recorded = await readCapture(deps.db, captureKey);
    if (recorded.stage === 'captured') return { capture: recorded.capture, resolvedBy: 'records' };
    if (recorded.stage === 'failed') return null;

    // Pending or never registered: ask Stripe about the hold this capture was for. Retrieving by
    // ID is consistent at once (unlike search).
    const authorization = await readAuthorization(deps.db, deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.authorizationActivityId }));
    if (authorization.stage !== 'held') return null;
    const { hold } = authorization;
    const payment = stripePaymentOf(await deps.stripe.paymentIntents.retrieve(hold.paymentIntentId, { expand: ['latest_charge'] }));
    if (payment.stage === 'captured') {
      log.warn('capture outcome was unknown; Stripe captured the hold, recording it before the refund', { idempotencyKey: captureKey, paymentIntentId: hold.paymentIntentId });
      await registerCapture(deps.db, captureKey, hold, retention);
      return { capture: (await recordCapture(deps.db, input.orderId, captureKey, payment.capture)).capture, resolvedBy: 'stripe' };
    }
    // Nothing captured: close the capture key so nothing can capture after this decision.
    const fenced = await fenceCapture(deps.db, captureKey, 'compensated before the capture completed', retention);
    // The capture finished while we looked: refund what it recorded.
    return fenced.stage === 'captured' ? { capture: fenced.capture, resolvedBy: 'records' } : null;
  }

  async function createRefund(input: RefundCaptureInput, refundKey: string, capture: Capture): Promise<Stripe.Refund> {
    try {
      return await deps.stripe.refunds.create(
        {
          ...refundRequest(capture),
          reason: 'requested_by_customer',
          metadata: { order_id: input.orderId, workflow_id: input.workflowId, run_id: input.originalRunId, activity_id: ActivityId.refundCapture },
        },
        { idempotencyKey: refundKey },
      );
    } catch (error) {
      const classified = classifyStripeError(error);
      if (classified.kind === 'retryable') throw error;
      // Already refunded, but not under our key (Stripe forgot the key, or a person refunded it in
      // the Dashboard): adopt our own refund if Stripe has it; otherwise a person decides.
      const refunds = await deps.stripe.refunds.list({ payment_intent: capture.paymentIntentId, limit: 100 });
      const ours = refunds.data.find((refund) => refund.metadata?.run_id === input.originalRunId && refund.metadata.activity_id === ActivityId.refundCapture);
      if (ours) return ours;
      throw new NeedsReviewError(`refund of ${capture.paymentIntentId} refused by Stripe: ${classified.kind === 'declined' ? classified.code : classified.message}`);
    }
  }

  return { refundCapture: refundCapture };
}
