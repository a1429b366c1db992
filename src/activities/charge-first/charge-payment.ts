// The charge-first shape's charge (kept for executions started before hold-then-capture): one
// PaymentIntent charged at once under the charge key.
import { log } from '@temporalio/activity';
import type Stripe from 'stripe';
import { withTransaction } from '../../platform/db/transaction.js';
import {
  ChargeAttemptExpiredError,
  FailureType,
  IdempotencyConflictError,
  PaymentDeclinedError,
  PaymentIncompleteError,
  StripeInvalidRequestError,
  type OrderPaymentError,
} from '../../domain/failures.js';
import { ChargeFirstActivityId } from '../../domain/activity-ids.js';
import type { OrderInput } from '../../domain/order-input.js';
import { failpoint } from '../../platform/failpoint.js';
import {
  fenceKey,
  finishKey,
  markKeyProcessing,
  readKey,
  registerKey,
  replayFinishedKey,
  reopenFencedKey,
  type KeyRecord,
} from '../../money/idempotency/activity-idempotency-store.js';
import { requestHash } from '../../money/idempotency/request-hash.js';
import { postLedgerTransaction } from '../../money/ledger/ledger.js';
import { claimCharge, flagForReview, setOrderStatus } from '../../orders/orders.js';
import { announceOrderFailed, announceOrderPaid } from '../../messaging/outbox/order-events.js';
import { classifyStripeError } from '../../money/stripe/error-classification.js';
import { findSucceededPaymentIntent } from '../../money/stripe/order-search.js';
import { currentActivityKey } from '../activity-key.js';
import {
  DEFAULT_KEY_RETENTION_MS,
  DEFAULT_SETTLEMENT_RECHECK_MS,
  DEFAULT_STRIPE_KEY_RETENTION_MS,
  type ActivityDeps,
} from '../deps.js';
import type { ChargeOutcome, ChargePaymentInput, ChargeResult, PendingCharge } from './types.js';
import { countReplay } from '../../platform/telemetry/activity-metrics.js';

export const CHARGE_SCOPE = 'stripe.charge';
const SCOPE = CHARGE_SCOPE;

/** What a failed charge key stores, so every later attempt answers with the same failure. */
export type ChargeFailure =
  | { failure: typeof FailureType.PaymentDeclined; code: string; declineCode: string | null; paymentIntentId: string | null }
  | { failure: typeof FailureType.PaymentIncomplete; paymentIntentId: string; status: string }
  | { failure: typeof FailureType.ChargeAttemptExpired; fenced: true; reason: string }
  | { failure: typeof FailureType.IdempotencyConflict; message: string };

/** What a processing key stores: the PaymentIntent that is still settling. */
export type SettlingCharge = Omit<PendingCharge, 'recheckAfterMs'>;

export type StoredCharge = ChargeResult | SettlingCharge | ChargeFailure;

/** Statuses in which Stripe accepted the payment but has not settled it. */
export function isSettling(status: Stripe.PaymentIntent.Status): status is SettlingCharge['status'] {
  return status === 'processing' || status === 'requires_action';
}

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

  const recheckAfterMs = deps.settlementRecheckMs ?? DEFAULT_SETTLEMENT_RECHECK_MS;

  return charge;

  async function charge(input: ChargePaymentInput): Promise<ChargeOutcome> {
    const { order } = input;
    const key = currentActivityKey(input.originalRunId);
    const params = paymentIntentParams(input);
    const hash = requestHash(params);

    // A retry of a charge that already has its outcome (the worker died before reporting it, or
    // the run was reset) is answered by one indexed statement, without Stripe.
    const finished = await replayFinishedKey<StoredCharge>(deps.db, SCOPE, key, hash);
    if (finished) return answerFromRecord(finished, key, recheckAfterMs);

    // Phase 1: register the intent before anything leaves the building. Two statements, not a
    // transaction: the claim is idempotent for this key and the registration is an upsert, so a
    // crash between them leaves nothing the retry does not finish, and each round trip saved
    // is one every order pays.
    const { claimedBefore } = await claimCharge(deps.db, order.orderId, key);
    const record = await registerKey<StoredCharge>(deps.db, { scope: SCOPE, key, requestHash: hash, retentionMs: keyRetentionMs });
    if (record.state !== 'pending') return answerFromRecord(record, key, recheckAfterMs);
    // The order's charge was claimed for this key before, yet the key's record is new: the reaper
    // deleted it (a reset long after the order), or an attempt stopped between the statements
    // above. Stripe has forgotten a reaped key, so ask it first; a charge it holds is adopted.
    if (claimedBefore && record.attempts === 1) {
      const existing = await findSucceededPaymentIntent(deps.stripe, order.orderId);
      if (existing) return recordCharge(deps, order.orderId, key, existing);
    }

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

    if (isSettling(paymentIntent.status)) {
      // Accepted, not settled: the ledger waits for the money. The key keeps the PaymentIntent,
      // so a retry answers the same without calling Stripe, and the settlement finishes the key.
      return holdForSettlement(deps, order.orderId, key, paymentIntent, recheckAfterMs);
    }
    if (paymentIntent.status !== 'succeeded') {
      const failure: ChargeFailure = {
        failure: FailureType.PaymentIncomplete,
        paymentIntentId: paymentIntent.id,
        status: paymentIntent.status,
      };
      await withTransaction(deps.db, (client) => finishKey(client, SCOPE, key, 'failed', failure));
      throw failureFor(failure, key);
    }

    // Phase 3: the outcome and the books, together or not at all.
    const result = await recordCharge(deps, order.orderId, key, paymentIntent);
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
      activity_id: ChargeFirstActivityId.chargePayment,
    },
  };
}

/**
 * Records a succeeded PaymentIntent under the charge key: the key's outcome, the ledger's charge
 * and the order's paid status, in one transaction. Also how a payment that settled later is
 * recorded: the same key, so the ledger holds it once whoever records it.
 */
export async function recordCharge(
  deps: ActivityDeps,
  orderId: string,
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
        await flagForReview(client, orderId, `charge ${result.paymentIntentId} completed after the saga fenced its key; refund it by hand`);
        flaggedForReview = true;
        log.error('charge completed after its key was fenced; order flagged for review', { idempotencyKey: key });
      } else {
        log.info('charge already recorded by another attempt', { idempotencyKey: key });
      }
    }
    await postLedgerTransaction(client, {
      orderId: orderId,
      kind: 'charge',
      amountMinor: result.amount,
      currency: result.currency,
      stripeObjectId: result.paymentIntentId,
      idempotencyKey: key,
    });
    await setOrderStatus(client, orderId, { status: 'paid', paymentIntentId: result.paymentIntentId });
    // The outbox rule: the money moved, so its announcement commits with it.
    await announceOrderPaid(client, orderId, {
      amountMinor: result.amount,
      currency: result.currency,
      paymentIntentId: result.paymentIntentId,
    });
    if (flaggedForReview) await announceOrderFailed(client, orderId, { paymentIntentId: result.paymentIntentId });
    return result;
  });
}

async function handleStripeError(deps: ActivityDeps, order: OrderInput, key: string, error: unknown): Promise<never> {
  const classified = classifyStripeError(error);
  switch (classified.kind) {
    case 'declined': {
      const failure: DeclinedCharge = {
        failure: FailureType.PaymentDeclined,
        code: classified.code,
        declineCode: classified.declineCode,
        paymentIntentId: classified.paymentIntentId,
      };
      const stored = await recordDecline(deps, order.orderId, key, failure);
      if ('failure' in stored) throw failureFor(stored, key);
      throw new Error(`charge key '${key}' holds an outcome although Stripe declined the charge`);
    }
    case 'idempotency-conflict': {
      const failure: ChargeFailure = { failure: FailureType.IdempotencyConflict, message: classified.message };
      await withTransaction(deps.db, (client) => finishKey(client, SCOPE, key, 'failed', failure));
      throw failureFor(failure, key);
    }
    case 'invalid-request':
      // A bug or a misconfiguration, not a decline: retrying sends the same request, so stop,
      // and leave the key pending so nothing claims the order was or was not charged.
      throw new StripeInvalidRequestError(`Stripe refused the charge request: ${classified.message}`, {
        code: classified.code,
      });
    case 'retryable':
      log.warn('charge outcome unknown; retrying under the same key', { idempotencyKey: key, reason: classified.reason });
      throw error;
  }
}

export type DeclinedCharge = Extract<ChargeFailure, { failure: typeof FailureType.PaymentDeclined }>;

/**
 * Records a decline under the charge key, with the order's declined status and its
 * announcement, in one transaction. Returns what the key holds afterwards: this decline, or the
 * outcome another attempt recorded first.
 */
export async function recordDecline(deps: ActivityDeps, orderId: string, key: string, failure: DeclinedCharge): Promise<StoredCharge> {
  return withTransaction(deps.db, async (client) => {
    if (!(await finishKey(client, SCOPE, key, 'failed', failure))) {
      const existing = await readKey<StoredCharge>(client, SCOPE, key);
      if (existing?.result) return existing.result;
    }
    await setOrderStatus(client, orderId, { status: 'declined', reason: failure.declineCode ?? failure.code });
    await announceOrderFailed(client, orderId, { paymentIntentId: failure.paymentIntentId });
    return failure;
  });
}

/**
 * Keeps the key open as processing with the PaymentIntent that is settling, and answers pending.
 * If the key was closed meanwhile (a compensation fenced it while this attempt talked to Stripe),
 * the saga already decided this order is not charged: the PaymentIntent is cancelled so that it
 * can never settle, and the attempt answers with what the key holds.
 */
async function holdForSettlement(
  deps: ActivityDeps,
  orderId: string,
  key: string,
  paymentIntent: Stripe.PaymentIntent,
  recheckAfterMs: number,
): Promise<ChargeOutcome> {
  const settling: SettlingCharge = {
    paymentIntentId: paymentIntent.id,
    amount: paymentIntent.amount,
    currency: paymentIntent.currency,
    status: paymentIntent.status as SettlingCharge['status'],
  };
  const marked = await withTransaction(deps.db, (client) => markKeyProcessing(client, SCOPE, key, settling));
  if (marked) {
    log.info('payment accepted, settling asynchronously', { idempotencyKey: key, paymentIntentId: paymentIntent.id, status: paymentIntent.status });
    return { ...settling, recheckAfterMs };
  }
  const existing = await readKey<StoredCharge>(deps.db, SCOPE, key);
  if (existing?.state === 'failed') {
    try {
      await deps.stripe.paymentIntents.cancel(paymentIntent.id, {}, { idempotencyKey: `${key}/fenced-cancel` });
    } catch (error) {
      if (classifyStripeError(error).kind === 'retryable') throw error;
      // It settled first: record it, which flags the order for review as any late charge does.
      const settled = await deps.stripe.paymentIntents.retrieve(paymentIntent.id);
      if (settled.status === 'succeeded') return recordCharge(deps, orderId, key, settled);
    }
  }
  if (!existing) throw new Error(`charge key '${key}' vanished`);
  return answerFromRecord(existing, key, recheckAfterMs);
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
): Promise<ChargeOutcome> {
  const existing = await findSucceededPaymentIntent(deps.stripe, order.orderId);
  if (existing) {
    log.warn('pending charge key outlived Stripe retention; adopted the charge Stripe holds', {
      idempotencyKey: key,
      paymentIntentId: existing.id,
    });
    return recordCharge(deps, order.orderId, key, existing);
  }
  const failure: ChargeFailure = {
    failure: FailureType.ChargeAttemptExpired,
    fenced: true,
    reason: 'charge key outlived Stripe key retention and Stripe holds no charge for the order',
  };
  const fenced = await withTransaction(deps.db, (client) =>
    fenceKey<StoredCharge>(client, { scope: SCOPE, key, retentionMs: keyRetentionMs, result: failure }),
  );
  return answerFromRecord(fenced, key, 0);
}

/** The answer a key already holds: the charge, the payment still settling, or the failure (thrown). */
export function answerFromRecord(record: KeyRecord<StoredCharge>, key: string, recheckAfterMs: number): ChargeOutcome {
  const stored = record.result;
  if (record.state === 'completed' && stored && !('failure' in stored) && stored.status === 'succeeded') {
    log.info('charge answered from the ledger; Stripe not called', { idempotencyKey: key });
    countReplay('ledger');
    return stored;
  }
  if (record.state === 'processing' && stored && !('failure' in stored) && isSettling(stored.status)) {
    return { ...(stored as SettlingCharge), recheckAfterMs };
  }
  if (record.state === 'failed' && stored && 'failure' in stored) throw failureFor(stored, key);
  throw new Error(`charge key '${key}' is ${record.state} with no usable result`);
}

/** The error a recorded charge failure answers with, every time it is asked. */
export function failureFor(stored: ChargeFailure, key: string): OrderPaymentError {
  switch (stored.failure) {
    case FailureType.PaymentDeclined:
      return new PaymentDeclinedError({ code: stored.code, declineCode: stored.declineCode, paymentIntentId: stored.paymentIntentId });
    case FailureType.PaymentIncomplete:
      return new PaymentIncompleteError(
        stored.paymentIntentId,
        stored.status,
        `payment ${stored.paymentIntentId} did not complete synchronously (status ${stored.status})`,
      );
    case FailureType.ChargeAttemptExpired:
      return new ChargeAttemptExpiredError(stored.reason);
    case FailureType.IdempotencyConflict:
      return new IdempotencyConflictError('stripe', key, stored.message);
  }
}
