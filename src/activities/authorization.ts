// The authorization activities: place the hold (a PaymentIntent with manual capture) once under
// the authorization key, and settle one that Stripe could not decide at once.
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { ActivityId } from '../domain/activity-ids.js';
import {
  FailureType,
  IdempotencyConflictError,
  NeedsReviewError,
  PaymentAttemptExpiredError,
  PaymentDeclinedError,
  PaymentIncompleteError,
  StripeInvalidRequestError,
  type OrderPaymentError,
} from '../domain/failures.js';
import { failpoint } from '../platform/failpoint.js';
import { deriveIdempotencyKey } from '../money/idempotency/idempotency-key.js';
import {
  fenceAuthorization,
  readAuthorization,
  recordAuthorizationFailure,
  recordCapturedAuthorization,
  recordDecline,
  recordHold,
  recordSettling,
  registerAuthorization,
  stripePaymentOf,
  type Authorization,
  type AuthorizationFailure,
  type DeclinedAuthorization,
  type SettlingAuthorization,
} from '../money/payments/payment-protocol.js';
import { classifyStripeError } from '../money/stripe/error-classification.js';
import { findOrderPaymentIntents } from '../money/stripe/order-search.js';
import { currentActivityKey } from './activity-key.js';
import {
  DEFAULT_AUTHENTICATION_DEADLINE_MS,
  DEFAULT_CAPTURE_MARGIN_MS,
  DEFAULT_KEY_RETENTION_MS,
  DEFAULT_PROCESSING_DEADLINE_MS,
  DEFAULT_SETTLEMENT_RECHECK_MS,
  DEFAULT_STRIPE_KEY_RETENTION_MS,
  type ActivityDeps,
} from './deps.js';
import type { AuthorizationOutcome, AuthorizePaymentInput, SettleAuthorizationInput } from './types.js';
import { countReplay, recordSettlement } from '../platform/telemetry/activity-metrics.js';

/**
 * The authorization: the hold on the customer's card, and the settling of one that Stripe could
 * not decide at once. Both record what Stripe says through the payment protocol's transitions.
 */
export function createAuthorizationActivities(deps: ActivityDeps) {
  const retention = { retentionMs: deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS };
  const stripeKeyRetentionMs = deps.stripeKeyRetentionMs ?? DEFAULT_STRIPE_KEY_RETENTION_MS;
  const recheckAfterMs = deps.settlementRecheckMs ?? DEFAULT_SETTLEMENT_RECHECK_MS;
  const captureMarginMs = deps.captureMarginMs ?? DEFAULT_CAPTURE_MARGIN_MS;
  const settlingDeadlineMs: Record<SettlingAuthorization['status'], number> = {
    processing: deps.processingDeadlineMs ?? DEFAULT_PROCESSING_DEADLINE_MS,
    requires_action: deps.authenticationDeadlineMs ?? DEFAULT_AUTHENTICATION_DEADLINE_MS,
  };
  const answer = (authorization: Authorization, key: string) => answerFor(authorization, key, { recheckAfterMs, captureMarginMs });
  const answerFromPostgres = (authorization: Authorization, key: string) => {
    log.info('authorization answered from Postgres; Stripe not called', { idempotencyKey: key, stage: authorization.stage });
    countReplay('ledger');
    return answer(authorization, key);
  };

  /**
   * Places the order's hold, in three named phases:
   *   1. register the authorization's key as pending, and claim the order's one payment for it;
   *   2. create and confirm the PaymentIntent with capture_method=manual, under that key;
   *   3. record what Stripe answered: the hold, an authorization still settling, or a decline.
   * A key that already has its answer is answered from Postgres without calling Stripe. A key
   * still pending is re-sent under the same key while Stripe remembers it, and reconciled by
   * asking Stripe once it may not.
   */
  async function authorizePayment(input: AuthorizePaymentInput): Promise<AuthorizationOutcome> {
    const { order } = input;
    const key = currentActivityKey(input.originalRunId);
    const params = authorizationParams(input);

    // Phase 1: the intent is on record before anything leaves the building. A key that already
    // has its answer (a retry after a crash, a reset) is answered by the same two statements.
    const registered = await registerAuthorization(deps.db, { orderId: order.orderId, key, params, ...retention });
    if (registered.authorization.stage !== 'unknown') return answerFromPostgres(registered.authorization, key);
    if (registered.keyLost) {
      const adopted = await adoptAfterLostKey(input, key);
      if (adopted) return answer(adopted, key);
    }
    if (registered.attempts > 1 && Date.now() - registered.pendingSince.getTime() >= stripeKeyRetentionMs) {
      return answer(await reconcileForgottenKey(input, key), key);
    }

    // Phase 2: the Stripe call. Re-sending under the same key is what makes a lost response safe.
    log.info('authorizing PaymentIntent (manual capture)', { idempotencyKey: key, attempt: registered.attempts, orderId: order.orderId });
    let paymentIntent: Stripe.PaymentIntent;
    try {
      paymentIntent = await deps.stripe.paymentIntents.create(params, { idempotencyKey: key });
    } catch (error) {
      return answer(await recordRefusal(order.orderId, key, error), key);
    }
    failpoint('authorize.after-stripe');

    // Phase 3: what Stripe said, on record.
    const recorded = await recordStripeAnswer(deps, order.orderId, input.originalRunId, key, paymentIntent);
    failpoint('authorize.after-commit');
    return answer(recorded, key);
  }

  /**
   * Settles an authorization whose PaymentIntent was still deciding when it answered. Stripe is
   * the source of truth: the webhook only wakes the saga, and this retrieves the PaymentIntent and
   * records what it says under the authorization's own key: the hold; a decline; or, still
   * settling, the same answer again, until its deadline passes and the PaymentIntent is cancelled
   * (under a key of its own) and the order declined.
   */
  async function settleAuthorization(input: SettleAuthorizationInput): Promise<AuthorizationOutcome> {
    const key = deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.authorizationActivityId });
    const authorization = await readAuthorization(deps.db, key);
    if (authorization.stage === 'unknown') {
      throw new NeedsReviewError(`no authorization recorded under key '${key}' to settle`);
    }
    // Final already (an earlier attempt, or a compensation's resolution): the same answer again.
    if (authorization.stage !== 'settling') return answer(authorization, key);

    const { settling, since } = authorization;
    const expired = Date.now() - since.getTime() >= settlingDeadlineMs[settling.status];
    log.info('settling authorization', {
      idempotencyKey: key,
      paymentIntentId: settling.paymentIntentId,
      trigger: input.trigger.kind,
      ...(input.trigger.kind === 'webhook' && { eventId: input.trigger.eventId }),
      expired,
    });
    const now = await deps.stripe.paymentIntents.retrieve(settling.paymentIntentId, { expand: ['latest_charge'] });
    if (stripePaymentOf(now).stage !== 'settling') recordSettlement(input.trigger.kind, (Date.now() - since.getTime()) / 1000);
    if (!expired || stripePaymentOf(now).stage !== 'settling') {
      return answer(await recordStripeAnswer(deps, input.orderId, input.originalRunId, key, now), key);
    }
    // Past its deadline and still undecided: cancel it, so it can never settle after we gave up.
    const code = settling.status === 'requires_action' ? 'payment_intent_authentication_failure' : 'payment_intent_payment_attempt_expired';
    try {
      await deps.stripe.paymentIntents.cancel(
        settling.paymentIntentId,
        { cancellation_reason: 'abandoned' },
        { idempotencyKey: deriveIdempotencyKey({ runId: input.originalRunId, activityId: input.authorizationActivityId, step: 'expire' }) },
      );
    } catch (error) {
      if (classifyStripeError(error).kind === 'retryable') throw error;
      // It decided first (or cannot be cancelled while it processes): record where it stands.
      const decided = await deps.stripe.paymentIntents.retrieve(settling.paymentIntentId, { expand: ['latest_charge'] });
      log.warn('could not cancel an expired settling authorization; recording where it stands', { paymentIntentId: decided.id, status: decided.status });
      return answer(await recordStripeAnswer(deps, input.orderId, input.originalRunId, key, decided), key);
    }
    const decline: DeclinedAuthorization = { failure: FailureType.PaymentDeclined, code, declineCode: null, paymentIntentId: settling.paymentIntentId };
    return answer(await recordDecline(deps.db, input.orderId, key, decline), key);
  }

  /** Stripe refused the request: record a final refusal under the key, or rethrow to retry. */
  async function recordRefusal(orderId: string, key: string, error: unknown): Promise<Authorization> {
    const classified = classifyStripeError(error);
    switch (classified.kind) {
      case 'declined':
        return recordDecline(deps.db, orderId, key, {
          failure: FailureType.PaymentDeclined,
          code: classified.code,
          declineCode: classified.declineCode,
          paymentIntentId: classified.paymentIntentId,
        });
      case 'idempotency-conflict':
        return recordAuthorizationFailure(deps.db, key, { failure: FailureType.IdempotencyConflict, message: classified.message });
      case 'invalid-request':
        // A bug or a misconfiguration, not a decline: retrying sends the same request, so stop,
        // and leave the key pending so nothing claims the order was or was not authorized.
        throw new StripeInvalidRequestError(`Stripe refused the authorization request: ${classified.message}`, { code: classified.code });
      case 'retryable':
        log.warn('authorization outcome unknown; retrying under the same key', { idempotencyKey: key, reason: classified.reason });
        throw error;
    }
  }

  /**
   * The key has been pending longer than Stripe remembers keys: re-sending it could place a second
   * hold. Ask Stripe instead: the PaymentIntent this key created is adopted and recorded; none
   * means the first attempt never reached Stripe, and the key is fenced so no attempt sends it.
   */
  async function reconcileForgottenKey(input: AuthorizePaymentInput, key: string): Promise<Authorization> {
    const found = await findAuthorizationAtStripe(deps, input.order.orderId, input.originalRunId);
    if (found) {
      log.warn('pending authorization key outlived Stripe key retention; adopted the PaymentIntent Stripe holds', { idempotencyKey: key, paymentIntentId: found.id });
      return recordStripeAnswer(deps, input.order.orderId, input.originalRunId, key, found);
    }
    return fenceAuthorization(deps.db, key, 'authorization key outlived Stripe key retention and Stripe holds no PaymentIntent for it', retention);
  }

  /**
   * The order's payment key was claimed by an earlier attempt but its record is gone: the reaper
   * deleted it (a reset long after the order), or that attempt stopped before registering it.
   * Stripe has forgotten a reaped key, so re-sending it would place a second hold: ask Stripe
   * first. The PaymentIntent this key created is adopted (as the hold it was, if the saga has
   * captured it since); none means no earlier attempt reached Stripe, and this one may send.
   */
  async function adoptAfterLostKey(input: AuthorizePaymentInput, key: string): Promise<Authorization | null> {
    const found = await findAuthorizationAtStripe(deps, input.order.orderId, input.originalRunId);
    if (!found) return null;
    log.warn('authorization key record was lost, but Stripe holds its PaymentIntent; adopted it', { idempotencyKey: key, paymentIntentId: found.id, status: found.status });
    return found.status === 'succeeded'
      ? recordCapturedAuthorization(deps.db, key, found)
      : recordStripeAnswer(deps, input.order.orderId, input.originalRunId, key, found);
  }

  return {
    authorizePayment,
    settleAuthorization,
  };
}

function authorizationParams({ order, workflowId, originalRunId }: AuthorizePaymentInput): Stripe.PaymentIntentCreateParams {
  return {
    amount: order.amount,
    currency: order.currency,
    payment_method: order.paymentMethod,
    confirm: true,
    // A hold: the money moves only when the saga captures, after the stock is reserved.
    capture_method: 'manual',
    // Server-side confirmation has nowhere to redirect a customer to.
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    // The charge carries the hold's capture_before.
    expand: ['latest_charge'],
    description: `Order ${order.orderId}`,
    metadata: {
      order_id: order.orderId,
      customer_id: order.customerId,
      workflow_id: workflowId,
      run_id: originalRunId,
      activity_id: ActivityId.authorizePayment,
    },
  };
}

/**
 * Records what a PaymentIntent says about the authorization under its key, and returns where the
 * authorization stands afterwards. Shared by the authorization, its settlement, and the void
 * resolving an authorization whose answer was lost.
 *
 * A hold or a settling PaymentIntent that arrives after a compensation fenced the key (an attempt
 * that was still talking to Stripe) is cancelled at once: the saga already decided this order has
 * no payment, and a hold costs nothing to release.
 */
export async function recordStripeAnswer(
  deps: ActivityDeps,
  orderId: string,
  originalRunId: string,
  key: string,
  paymentIntent: Stripe.PaymentIntent,
): Promise<Authorization> {
  const payment = stripePaymentOf(paymentIntent);
  let recorded: Authorization;
  switch (payment.stage) {
    case 'held':
      recorded = await recordHold(deps.db, orderId, key, payment.hold);
      break;
    case 'settling':
      recorded = await recordSettling(deps.db, key, payment.settling);
      break;
    case 'declined':
      return recordDecline(deps.db, orderId, key, payment.decline);
    case 'canceled':
      return recordDecline(deps.db, orderId, key, {
        failure: FailureType.PaymentDeclined,
        code: 'payment_intent_canceled',
        declineCode: null,
        paymentIntentId: payment.paymentIntentId,
      });
    case 'incomplete':
      return recordAuthorizationFailure(deps.db, key, { failure: FailureType.PaymentIncomplete, paymentIntentId: payment.paymentIntentId, status: payment.status });
    case 'captured':
      // capture_method=manual: only the saga's capture step captures. Someone captured it by hand.
      throw new NeedsReviewError(`PaymentIntent ${paymentIntent.id} was captured before the saga captured it; a person must look`);
  }
  if (recorded.stage === 'failed' && 'fenced' in recorded.failure) {
    await releaseLateHold(deps, originalRunId, paymentIntent.id);
  }
  return recorded;
}

async function releaseLateHold(deps: ActivityDeps, originalRunId: string, paymentIntentId: string): Promise<void> {
  log.warn('an authorization landed after its key was fenced; voiding it', { paymentIntentId });
  try {
    await deps.stripe.paymentIntents.cancel(
      paymentIntentId,
      { cancellation_reason: 'abandoned' },
      { idempotencyKey: deriveIdempotencyKey({ runId: originalRunId, activityId: ActivityId.authorizePayment, step: 'fenced-void' }) },
    );
  } catch (error) {
    if (classifyStripeError(error).kind === 'retryable') throw error;
    // Already cancelled, or it cannot be cancelled: the reconciliation's I8 check will say so.
    log.warn('could not void a late authorization', { paymentIntentId, error: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * The PaymentIntent the authorization of this run created, found by the metadata every saga
 * authorization carries. Only for outcomes our records cannot tell (Stripe's search lags writes by
 * up to a minute); retrieved again so the hold's `capture_before` is at hand.
 */
export async function findAuthorizationAtStripe(deps: ActivityDeps, orderId: string, originalRunId: string): Promise<Stripe.PaymentIntent | null> {
  const intents = await findOrderPaymentIntents(deps.stripe, orderId);
  const ours = intents.filter((intent) => intent.metadata.run_id === originalRunId && intent.metadata.activity_id === ActivityId.authorizePayment);
  if (ours.length > 1) throw new Error(`order '${orderId}' has ${ours.length} PaymentIntents from one authorization key; needs review`);
  const found = ours[0];
  return found ? deps.stripe.paymentIntents.retrieve(found.id, { expand: ['latest_charge'] }) : null;
}

/** The answer an authorization's record gives: the hold, the payment still settling, or its failure (thrown). */
function answerFor(
  authorization: Authorization,
  key: string,
  settings: { recheckAfterMs: number; captureMarginMs: number },
): AuthorizationOutcome {
  switch (authorization.stage) {
    case 'held':
      return { ...authorization.hold, captureWithinMs: authorization.hold.captureBefore * 1000 - settings.captureMarginMs - Date.now() };
    case 'settling':
      return { ...authorization.settling, recheckAfterMs: settings.recheckAfterMs };
    case 'failed':
      throw authorizationFailure(authorization.failure, key);
    case 'unknown':
      throw new Error(`authorization key '${key}' has no answer yet`);
  }
}

/** The error a recorded authorization failure answers with, every time it is asked. */
function authorizationFailure(stored: AuthorizationFailure, key: string): OrderPaymentError {
  switch (stored.failure) {
    case FailureType.PaymentDeclined:
      return new PaymentDeclinedError({ code: stored.code, declineCode: stored.declineCode, paymentIntentId: stored.paymentIntentId });
    case FailureType.PaymentIncomplete:
      return new PaymentIncompleteError(stored.paymentIntentId, stored.status, `payment ${stored.paymentIntentId} cannot be authorized (status ${stored.status})`);
    case FailureType.PaymentAttemptExpired:
      return new PaymentAttemptExpiredError(stored.reason);
    case FailureType.IdempotencyConflict:
      return new IdempotencyConflictError('stripe', key, stored.message);
  }
}
