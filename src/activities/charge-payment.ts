import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Stripe from 'stripe';
import { withTransaction } from '../db/transaction.js';
import { FailureType } from '../domain/failures.js';
import type { OrderInput } from '../domain/order-input.js';
import { failpoint } from '../failpoints/failpoint.js';
import {
  fenceKey,
  finishKey,
  readKey,
  registerKey,
  reopenFencedKey,
  type KeyRecord,
} from '../idempotency/activity-idempotency-store.js';
import { requestHash } from '../idempotency/request-hash.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { claimCharge, flagForReview, setOrderStatus } from '../orders/orders.js';
import { announceOrderFailed, announceOrderPaid } from '../outbox/order-events.js';
import { classifyStripeError } from '../stripe/error-classification.js';
import { findSucceededPaymentIntent } from '../stripe/order-search.js';
import { currentActivityKey } from './activity-key.js';
import { mappingFailures } from './failures.js';
import { DEFAULT_KEY_RETENTION_MS, DEFAULT_STRIPE_KEY_RETENTION_MS, type ActivityDeps } from './deps.js';
import type { ChargePaymentInput, ChargeResult } from './types.js';

const SCOPE = 'stripe.charge';

/** What a failed charge key stores, so every later attempt answers with the same failure. */
type ChargeFailure =
  | { failure: typeof FailureType.PaymentDeclined; code: string; declineCode: string | null; paymentIntentId: string | null }
  | { failure: typeof FailureType.PaymentIncomplete; paymentIntentId: string; status: string }
  | { failure: typeof FailureType.ChargeAttemptExpired; fenced: true; reason: string }
  | { failure: typeof FailureType.IdempotencyConflict; message: string };

type StoredCharge = ChargeResult | ChargeFailure;

/**
 * Charges the order once, in three named phases:
 *   1. register the key as pending (and claim the order's one charge for it);
 *   2. create and confirm the PaymentIntent under that key;
 *   3. record the outcome and the ledger's charge transaction in one transaction.
 * A key already finished is answered from Postgres without calling Stripe. A key still pending
 * is re-sent under the same key while Stripe still remembers it, and reconciled by searching
 * Stripe once it may not.
 */
export function createChargePayment(deps: ActivityDeps) {
  const keyRetentionMs = deps.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS;
  const stripeKeyRetentionMs = deps.stripeKeyRetentionMs ?? DEFAULT_STRIPE_KEY_RETENTION_MS;

  return function chargePayment(input: ChargePaymentInput): Promise<ChargeResult> {
    return mappingFailures(() => charge(input));
  };

  async function charge(input: ChargePaymentInput): Promise<ChargeResult> {
    const { order } = input;
    const key = currentActivityKey(input.originalRunId);
    const params = paymentIntentParams(input);

    // Phase 1: register the intent before anything leaves the building.
    const record = await withTransaction(deps.db, async (client) => {
      await claimCharge(client, order.orderId, key);
      return registerKey<StoredCharge>(client, {
        scope: SCOPE,
        key,
        requestHash: requestHash(params),
        retentionMs: keyRetentionMs,
      });
    });
    if (record.state !== 'pending') return answerFromRecord(record, key);

    const pendingForMs = Date.now() - record.createdAt.getTime();
    if (record.attempts > 1 && pendingForMs >= stripeKeyRetentionMs) {
      return reconcileExpiredKey(deps, order, key, keyRetentionMs);
    }

    // Phase 2: the Stripe call. Re-sending under the same key is what makes a lost response safe.
    log.info('creating PaymentIntent', { idempotencyKey: key, attempt: record.attempts, orderId: order.orderId });
    let paymentIntent: Stripe.PaymentIntent;
    try {
      paymentIntent = await deps.stripe.paymentIntents.create(params, { idempotencyKey: key });
    } catch (error) {
      return handleStripeError(deps, order, key, error);
    }
    failpoint('charge.after-stripe');

    if (paymentIntent.status !== 'succeeded') {
      const failure: ChargeFailure = {
        failure: FailureType.PaymentIncomplete,
        paymentIntentId: paymentIntent.id,
        status: paymentIntent.status,
      };
      await withTransaction(deps.db, (client) => finishKey(client, SCOPE, key, 'failed', failure));
      throw failureFor(failure);
    }

    // Phase 3: the outcome and the books, together or not at all.
    const result = await recordCharge(deps, order, key, paymentIntent);
    failpoint('charge.after-ledger');
    return result;
  }
}

function paymentIntentParams({ order, workflowId, originalRunId }: ChargePaymentInput): Stripe.PaymentIntentCreateParams {
  return {
    amount: order.amount,
    currency: order.currency,
    payment_method: order.paymentMethod,
    confirm: true,
    // Server-side confirmation has nowhere to redirect a customer to.
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    description: `Order ${order.orderId}`,
    metadata: {
      order_id: order.orderId,
      customer_id: order.customerId,
      workflow_id: workflowId,
      run_id: originalRunId,
      activity_id: 'charge-payment',
    },
  };
}

async function recordCharge(
  deps: ActivityDeps,
  order: OrderInput,
  key: string,
  paymentIntent: Stripe.PaymentIntent,
): Promise<ChargeResult> {
  const result: ChargeResult = {
    paymentIntentId: paymentIntent.id,
    amount: paymentIntent.amount,
    currency: paymentIntent.currency,
    status: 'succeeded',
  };
  return withTransaction(deps.db, async (client) => {
    let flaggedForReview = false;
    if (!(await finishKey(client, SCOPE, key, 'completed', result))) {
      const existing = await readKey<StoredCharge>(client, SCOPE, key);
      if (existing?.state === 'failed') {
        // A compensation fenced this key while this attempt was still talking to Stripe, and
        // Stripe charged. The money moved, so the books say so, and a person decides: the
        // saga has already decided there was nothing to refund.
        await reopenFencedKey(client, SCOPE, key, result);
        await flagForReview(client, order.orderId, `charge ${result.paymentIntentId} completed after the saga fenced its key; refund it by hand`);
        flaggedForReview = true;
        log.error('charge completed after its key was fenced; order flagged for review', { idempotencyKey: key });
      } else {
        log.info('charge already recorded by another attempt', { idempotencyKey: key });
      }
    }
    await postLedgerTransaction(client, {
      orderId: order.orderId,
      kind: 'charge',
      amountMinor: result.amount,
      currency: result.currency,
      stripeObjectId: result.paymentIntentId,
      idempotencyKey: key,
    });
    await setOrderStatus(client, order.orderId, { status: 'paid', paymentIntentId: result.paymentIntentId });
    // The outbox rule: the money moved, so its announcement commits with it.
    await announceOrderPaid(client, order.orderId, {
      amountMinor: result.amount,
      currency: result.currency,
      paymentIntentId: result.paymentIntentId,
    });
    if (flaggedForReview) await announceOrderFailed(client, order.orderId, { paymentIntentId: result.paymentIntentId });
    return result;
  });
}

async function handleStripeError(deps: ActivityDeps, order: OrderInput, key: string, error: unknown): Promise<never> {
  const classified = classifyStripeError(error);
  switch (classified.kind) {
    case 'declined': {
      const failure: ChargeFailure = {
        failure: FailureType.PaymentDeclined,
        code: classified.code,
        declineCode: classified.declineCode,
        paymentIntentId: classified.paymentIntentId,
      };
      await withTransaction(deps.db, async (client) => {
        await finishKey(client, SCOPE, key, 'failed', failure);
        await setOrderStatus(client, order.orderId, { status: 'declined', reason: classified.declineCode ?? classified.code });
        await announceOrderFailed(client, order.orderId, { paymentIntentId: classified.paymentIntentId });
      });
      throw failureFor(failure);
    }
    case 'idempotency-conflict': {
      const failure: ChargeFailure = { failure: FailureType.IdempotencyConflict, message: classified.message };
      await withTransaction(deps.db, (client) => finishKey(client, SCOPE, key, 'failed', failure));
      throw failureFor(failure);
    }
    case 'invalid-request':
      // A bug or a misconfiguration, not a decline: retrying sends the same request, so stop,
      // and leave the key pending so nothing claims the order was or was not charged.
      throw ApplicationFailure.nonRetryable(`Stripe refused the charge request: ${classified.message}`, 'StripeInvalidRequest', {
        code: classified.code,
      });
    case 'retryable':
      log.warn('charge outcome unknown; retrying under the same key', { idempotencyKey: key, reason: classified.reason });
      throw error;
  }
}

/**
 * The key has been pending longer than Stripe remembers keys: re-sending it could charge a
 * second time. Ask Stripe what exists for the order instead. A succeeded PaymentIntent is
 * adopted and recorded; none means the first attempt never charged, and the key is closed as
 * failed so that no later attempt sends it either.
 */
async function reconcileExpiredKey(
  deps: ActivityDeps,
  order: OrderInput,
  key: string,
  keyRetentionMs: number,
): Promise<ChargeResult> {
  const existing = await findSucceededPaymentIntent(deps.stripe, order.orderId);
  if (existing) {
    log.warn('pending charge key outlived Stripe retention; adopted the charge Stripe holds', {
      idempotencyKey: key,
      paymentIntentId: existing.id,
    });
    return recordCharge(deps, order, key, existing);
  }
  const failure: ChargeFailure = {
    failure: FailureType.ChargeAttemptExpired,
    fenced: true,
    reason: 'charge key outlived Stripe key retention and Stripe holds no charge for the order',
  };
  const fenced = await withTransaction(deps.db, (client) =>
    fenceKey<StoredCharge>(client, { scope: SCOPE, key, retentionMs: keyRetentionMs, result: failure }),
  );
  return answerFromRecord(fenced, key);
}

function answerFromRecord(record: KeyRecord<StoredCharge>, key: string): ChargeResult {
  const stored = record.result;
  if (record.state === 'completed' && stored && 'paymentIntentId' in stored && !('failure' in stored)) {
    log.info('charge answered from the ledger; Stripe not called', { idempotencyKey: key });
    return stored;
  }
  if (record.state === 'failed' && stored && 'failure' in stored) throw failureFor(stored);
  throw new Error(`charge key '${key}' is ${record.state} with no usable result`);
}

function failureFor(stored: ChargeFailure): ApplicationFailure {
  switch (stored.failure) {
    case FailureType.PaymentDeclined:
      return ApplicationFailure.nonRetryable(
        `card declined: ${stored.declineCode ?? stored.code}`,
        FailureType.PaymentDeclined,
        { code: stored.code, declineCode: stored.declineCode, paymentIntentId: stored.paymentIntentId },
      );
    case FailureType.PaymentIncomplete:
      return ApplicationFailure.nonRetryable(
        `payment ${stored.paymentIntentId} did not complete synchronously (status ${stored.status})`,
        FailureType.PaymentIncomplete,
        { paymentIntentId: stored.paymentIntentId, status: stored.status },
      );
    case FailureType.ChargeAttemptExpired:
      return ApplicationFailure.nonRetryable(stored.reason, FailureType.ChargeAttemptExpired);
    case FailureType.IdempotencyConflict:
      return ApplicationFailure.nonRetryable(stored.message, FailureType.IdempotencyConflict);
  }
}
