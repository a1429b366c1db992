// The capture activity: captures the hold under the capture key and books the ledger's charge
// for what was captured, in one transaction.
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { ActivityId } from '../domain/activity-ids.js';
import {
  AuthorizationExpiredError,
  FailureType,
  IdempotencyConflictError,
  OrderNotConfirmableError,
  StripeInvalidRequestError,
  type OrderPaymentError,
} from '../domain/failures.js';
import { failpoint } from '../platform/failpoint.js';
import {
  captureRequest,
  fenceCapture,
  recordCapture,
  recordCaptureConflict,
  recordExpiredHold,
  registerCapture,
  stripePaymentOf,
  type Capture,
  type CaptureFailure,
  type CaptureState,
} from '../money/payments/payment-protocol.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { currentActivityKey } from './activity-key.js';
import { DEFAULT_CAPTURE_MARGIN_MS, DEFAULT_KEY_RETENTION_MS, type ActivityDeps } from './deps.js';
import type { CapturePaymentInput } from './types.js';
import { countReplay } from '../platform/telemetry/activity-metrics.js';

/**
 * Captures the order's hold: the moment money moves. Three named phases, as for the
 * authorization:
 *   1. register the capture's key as pending;
 *   2. capture the PaymentIntent under that key;
 *   3. record the capture and the ledger's charge, for the captured amount, in one transaction.
 * A capture already recorded is answered from Postgres without calling Stripe. Past the hold's
 * capture deadline (`capture_before` less the capture margin) an attempt that finds no answer
 * calls Stripe no more and fails with AuthorizationExpired: the saga's compensations then resolve
 * what earlier attempts did (the refund asks Stripe, and fences the key if nothing was captured)
 * and void the hold. The deadline is the attempt's own check, so the saga needs no timer for it.
 *
 * Capturing twice is impossible at Stripe (a PaymentIntent is captured once), so a retry whose key
 * Stripe has forgotten is refused rather than obeyed, and the refusal is resolved by asking
 * Stripe where the PaymentIntent stands: captured (adopted and recorded, once), or cancelled
 * because the hold lapsed (AuthorizationExpired).
 */
export function createCapturePayment(deps: ActivityDeps) {
  const retention = { retentionMs: deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS };
  const captureMarginMs = deps.captureMarginMs ?? DEFAULT_CAPTURE_MARGIN_MS;

  async function capturePayment(input: CapturePaymentInput): Promise<Capture> {
    const { hold } = input;
    const key = currentActivityKey(input.originalRunId);

    // Phase 1: one statement registers the key, or finds the answer a finished one holds.
    const registered = await registerCapture(deps.db, key, hold, retention);
    if (registered.stage !== 'unknown') {
      log.info('capture answered from Postgres; Stripe not called', { idempotencyKey: key, stage: registered.stage });
      countReplay('ledger');
      return answer(registered, key);
    }

    // Past the deadline: no new call to Stripe. The error is final; the key stays pending for the
    // compensations to resolve.
    const deadlineMs = hold.captureBefore * 1000 - captureMarginMs;
    if (Date.now() >= deadlineMs) {
      throw new AuthorizationExpiredError(
        hold.paymentIntentId,
        `its capture deadline (capture_before ${new Date(hold.captureBefore * 1000).toISOString()} less the margin) passed before it could be captured`,
      );
    }

    // Phase 2: the Stripe call.
    log.info('capturing hold', { idempotencyKey: key, paymentIntentId: hold.paymentIntentId, orderId: input.orderId });
    let paymentIntent: Stripe.PaymentIntent;
    try {
      paymentIntent = await deps.stripe.paymentIntents.capture(
        hold.paymentIntentId,
        {
          // Capture metadata merges into the PaymentIntent's: name the capture without touching the
          // authorization's run_id and activity_id, which say which key created the PaymentIntent.
          ...captureRequest(hold, { captured_by_run_id: input.originalRunId, captured_by_activity_id: ActivityId.capturePayment }),
          expand: ['latest_charge'],
        },
        { idempotencyKey: key },
      );
    } catch (error) {
      return answer(await resolveRefusal(input, key, error), key);
    }
    failpoint('capture.after-stripe');

    // Phase 3.
    const payment = stripePaymentOf(paymentIntent);
    if (payment.stage !== 'captured') throw new Error(`capture of ${paymentIntent.id} answered with status ${paymentIntent.status}`);
    const { capture } = await recordCapture(deps.db, input.orderId, key, payment.capture);
    failpoint('capture.after-ledger');
    return capture;
  }

  /**
   * Stripe refused the capture. Unless the refusal is transient (retried under the same key) or a
   * key conflict, the PaymentIntent is not capturable any more, and only Stripe can say why.
   */
  async function resolveRefusal(input: CapturePaymentInput, key: string, error: unknown): Promise<CaptureState> {
    const classified = classifyStripeError(error);
    if (classified.kind === 'retryable') {
      log.warn('capture outcome unknown; retrying under the same key', { idempotencyKey: key, reason: classified.reason });
      throw error;
    }
    if (classified.kind === 'idempotency-conflict') return recordCaptureConflict(deps.db, key, classified.message);

    const now = await deps.stripe.paymentIntents.retrieve(input.hold.paymentIntentId, { expand: ['latest_charge'] });
    const payment = stripePaymentOf(now);
    log.warn('Stripe refused the capture; recording where the PaymentIntent stands', { idempotencyKey: key, paymentIntentId: now.id, status: now.status });
    switch (payment.stage) {
      case 'captured':
        // Captured already: an earlier attempt whose answer was lost and whose key Stripe forgot.
        return { stage: 'captured', capture: (await recordCapture(deps.db, input.orderId, key, payment.capture)).capture };
      case 'canceled':
        return payment.expired
          ? recordExpiredHold(deps.db, key, now.id, 'Stripe let the authorization lapse before it was captured')
          : fenceCapture(deps.db, key, `the hold was released (${payment.cancellationReason ?? 'canceled'}) before it was captured`, retention);
      default:
        throw new StripeInvalidRequestError(
          `Stripe refused to capture ${now.id} (status ${now.status}): ${classified.kind === 'declined' ? classified.code : classified.message}`,
        );
    }
  }

  return { capturePayment: capturePayment };
}

function answer(state: CaptureState, key: string): Capture {
  switch (state.stage) {
    case 'captured':
      return state.capture;
    case 'failed':
      throw captureFailure(state.failure, key);
    case 'unknown':
      throw new Error(`capture key '${key}' has no answer yet`);
  }
}

/** The error a recorded capture failure answers with, every time it is asked. */
function captureFailure(stored: CaptureFailure, key: string): OrderPaymentError {
  switch (stored.failure) {
    case FailureType.AuthorizationExpired:
      return new AuthorizationExpiredError(stored.paymentIntentId, stored.reason);
    case FailureType.OrderNotConfirmable:
      return new OrderNotConfirmableError(stored.reason);
    case FailureType.IdempotencyConflict:
      return new IdempotencyConflictError('stripe', key, stored.message);
  }
}
