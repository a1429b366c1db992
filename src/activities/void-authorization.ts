// The authorization's compensation: voids a hold nothing captured (free, unlike a refund).
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { NeedsReviewError } from '../domain/failures.js';
import { failpoint } from '../platform/failpoint.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import { fenceAuthorization, readAuthorization, readCapture, readVoid, recordVoid, registerVoid, stripePaymentOf, type Authorization } from '../money/payments/payment-protocol.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { currentActivityKey } from './activity-key.js';
import { findAuthorizationAtStripe, recordStripeAnswer } from './authorization.js';
import { DEFAULT_KEY_RETENTION_MS, type ActivityDeps } from './deps.js';
import type { VoidAuthorizationInput, VoidResult } from './types.js';
import { countReplay } from '../platform/telemetry/activity-metrics.js';

const CANCELLATION_REASON: Record<VoidAuthorizationInput['reason'], Stripe.PaymentIntentCancelParams.CancellationReason> = {
  cancelled: 'requested_by_customer',
  failed: 'abandoned',
  expired: 'abandoned',
};

/**
 * Voids the order's hold: the compensation of the authorization, registered before it runs. A
 * void costs nothing (a refund keeps Stripe's fee), which is why the saga holds before it
 * captures. Three named phases:
 *   1. resolve the authorization: from its key's record when it has an answer; otherwise (the
 *      attempt timed out, was cancelled, or its worker died) by asking Stripe, and fencing the
 *      authorization's key when Stripe holds nothing, so no late attempt can place a hold after
 *      the saga decided there was none;
 *   2. register the void's own key;
 *   3. cancel the PaymentIntent under that key and record it.
 * A PaymentIntent that was captured (by our records, or as Stripe says) is left to the capture's
 * compensation, the refund.
 */
export function createVoidAuthorization(deps: ActivityDeps) {
  const retention = { retentionMs: deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS };

  async function voidAuthorization(input: VoidAuthorizationInput): Promise<VoidResult> {
    const voidKey = currentActivityKey(input.originalRunId);
    // A void already done answers as it did the first time, whatever the authorization says now.
    const done = await readVoid(deps.db, voidKey);
    if (done.stage === 'voided') {
      log.info('void answered from Postgres; Stripe not called', { idempotencyKey: voidKey });
      countReplay('ledger');
      return { paymentIntentId: done.voided.paymentIntentId, outcome: done.voided.expired ? 'lapsed' : 'voided', resolvedBy: 'records' };
    }

    // Phase 1: what was authorized?
    const { authorization, resolvedBy } = await resolveAuthorization(input);
    const paymentIntentId = authorization.stage === 'held' ? authorization.hold.paymentIntentId : authorization.stage === 'settling' ? authorization.settling.paymentIntentId : null;
    if (paymentIntentId === null) return { paymentIntentId: null, outcome: 'nothing-held', resolvedBy };
    // Captured, by our own records: nothing is held any more, and the refund undoes the capture.
    const capture = await readCapture(deps.db, deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.captureActivityId }));
    if (capture.stage === 'captured') return { paymentIntentId, outcome: 'captured', resolvedBy: 'records' };

    // Phase 2: the void's own key.
    const registered = await registerVoid(deps.db, voidKey, paymentIntentId, retention);
    if (registered.stage === 'voided') {
      log.info('void answered from Postgres; Stripe not called', { idempotencyKey: voidKey });
      countReplay('ledger');
      return { paymentIntentId, outcome: registered.voided.expired ? 'lapsed' : 'voided', resolvedBy };
    }

    // Phase 3: release the hold.
    log.info('voiding hold', { idempotencyKey: voidKey, paymentIntentId, orderId: input.orderId, reason: input.reason });
    let cancelled: Stripe.PaymentIntent;
    try {
      cancelled = await deps.stripe.paymentIntents.cancel(paymentIntentId, { cancellation_reason: CANCELLATION_REASON[input.reason] }, { idempotencyKey: voidKey });
    } catch (error) {
      if (classifyStripeError(error).kind === 'retryable') throw error;
      return resolveRefusal(paymentIntentId, voidKey, resolvedBy);
    }
    failpoint('void.after-stripe');
    await recordVoid(deps.db, voidKey, { paymentIntentId, status: 'canceled', cancellationReason: cancelled.cancellation_reason, expired: false });
    if (authorization.stage === 'settling') {
      // It can never be decided now: its key is closed too, as the cancellation it is.
      await recordStripeAnswer(deps, input.orderId, input.originalRunId, authorizationKey(input), cancelled);
    }
    return { paymentIntentId, outcome: 'voided', resolvedBy };
  }

  async function resolveAuthorization(input: VoidAuthorizationInput): Promise<{ authorization: Authorization; resolvedBy: VoidResult['resolvedBy'] }> {
    const key = authorizationKey(input);
    const recorded = await readAuthorization(deps.db, key);
    if (recorded.stage !== 'unknown') return { authorization: recorded, resolvedBy: 'records' };

    // Pending or never registered: only Stripe knows. What it holds is recorded first, so our
    // records and the hold memo agree with Stripe before the hold is released.
    const found = await findAuthorizationAtStripe(deps, input.orderId, input.originalRunId);
    if (found) {
      log.warn('authorization outcome was unknown; Stripe holds a PaymentIntent for it', { idempotencyKey: key, paymentIntentId: found.id, status: found.status });
      return { authorization: await recordStripeAnswer(deps, input.orderId, input.originalRunId, key, found), resolvedBy: 'stripe' };
    }
    // Nothing at Stripe: close the key, so no attempt still in flight can place a hold after this.
    return { authorization: await fenceAuthorization(deps.db, key, 'compensated before the authorization completed', retention), resolvedBy: 'stripe' };
  }

  /** Stripe refused the cancel: the PaymentIntent moved on. Record where it stands. */
  async function resolveRefusal(paymentIntentId: string, voidKey: string, resolvedBy: VoidResult['resolvedBy']): Promise<VoidResult> {
    const now = stripePaymentOf(await deps.stripe.paymentIntents.retrieve(paymentIntentId));
    switch (now.stage) {
      case 'canceled':
        // Voided under another key, or Stripe let it lapse: either way nothing is held.
        await recordVoid(deps.db, voidKey, { paymentIntentId, status: 'canceled', cancellationReason: now.cancellationReason, expired: now.expired });
        return { paymentIntentId, outcome: now.expired ? 'lapsed' : 'voided', resolvedBy };
      case 'captured':
        log.warn('the hold was captured; nothing to void (the refund compensates a capture)', { paymentIntentId });
        return { paymentIntentId, outcome: 'captured', resolvedBy };
      case 'settling':
        // Some methods cannot be cancelled while they process: retry until the payment decides.
        throw new Error(`payment ${paymentIntentId} is still ${now.settling.status} and Stripe will not cancel it yet; retrying until it settles`);
      case 'declined':
      case 'incomplete':
        return { paymentIntentId, outcome: 'nothing-held', resolvedBy };
      case 'held':
        throw new NeedsReviewError(`Stripe refused to void the hold ${paymentIntentId}`);
    }
  }

  return { voidAuthorization: voidAuthorization };
}

function authorizationKey(input: VoidAuthorizationInput): string {
  return deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.authorizationActivityId });
}
