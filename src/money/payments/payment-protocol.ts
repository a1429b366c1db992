// The saga's payment keys (authorize, capture, void, refund): their stored outcomes, their named
// transitions and the one interpretation of a record.
import type { Pool } from 'pg';
import type Stripe from 'stripe';
import type { Queryable } from '../../platform/db/queryable.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { FailureType } from '../../domain/failures.js';
import {
  fenceKey,
  finishKey,
  markKeyProcessing,
  readKey,
  registerKey,
  reopenFencedKey,
  type IdempotencyScope,
  type KeyRecord,
} from '../idempotency/activity-idempotency-store.js';
import { requestHash } from '../idempotency/request-hash.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { claimCharge, flagForReview, setOrderStatus } from '../../orders/orders.js';
import { announceOrderFailed, announceOrderPaid, announceOrderRefunded } from '../../messaging/outbox/order-events.js';
import { countKeyFenced, countLateCaptureReview } from '../../platform/telemetry/activity-metrics.js';
import { insertHold, markHoldCaptured, markHoldReleased } from './payment-holds.js';

/**
 * The payment protocol of the hold-then-capture saga: the records that say where one order's
 * money stands, and the named transitions that move them. Every Stripe call the saga makes is
 * bracketed by them: the call's key is registered before it, and its outcome is recorded after
 * it in the same transaction as everything that outcome changes (the ledger, the order's status,
 * the hold memo, the outbox). Activities call these transitions and never read a stored record
 * themselves, so each record has exactly one interpretation: here.
 *
 *   authorize-payment key    registered ──► settling ──► held ───────────────┐
 *   (stripe.authorize)           │              │                           │
 *                                ├──► declined ◄┘                           │
 *                                └──► fenced: a compensation found nothing  │
 *                                     at Stripe, so no late attempt may act │
 *   capture-payment key      registered ──► captured: the ledger's charge ◄─┘
 *   (stripe.capture)             ├──► expired: the hold lapsed first
 *                                └──► fenced: a compensation found the hold uncaptured
 *   void-authorization key   registered ──► voided: the hold released, at no cost
 *   (stripe.void)
 *   refund-capture key       registered ──► refunded: the ledger's reversal
 *   (stripe.refund)
 *
 * A hold is not money: it is recorded in the `payment_holds` memo, never in the ledger. The
 * ledger's charge is posted at the capture, for the amount Stripe captured; a refund reverses it.
 */
export const PaymentScope = {
  authorize: 'stripe.authorize',
  capture: 'stripe.capture',
  void: 'stripe.void',
  refund: 'stripe.refund',
} as const satisfies Record<string, IdempotencyScope>;

/** How long a key's record is kept: past every horizon over which the key can come back. */
export interface Retention {
  retentionMs: number;
}

/** Stripe's authorization window for an online card payment, used when a charge names none. */
const DEFAULT_AUTHORIZATION_WINDOW_SECONDS = 7 * 24 * 60 * 60;

// ---------------------------------------------------------------------------------------------
// The authorization: the hold

/** A hold Stripe placed on the card: authorized, waiting to be captured. */
export interface Hold {
  paymentIntentId: string;
  amount: number;
  currency: string;
  status: 'requires_capture';
  /** Unix seconds: Stripe's `capture_before`. After it the authorization lapses. */
  captureBefore: number;
}

/**
 * An authorization Stripe accepted but has not decided: `processing` (an asynchronous method) or
 * `requires_action` (the customer must authenticate). The saga waits for its webhook.
 */
export interface SettlingAuthorization {
  paymentIntentId: string;
  amount: number;
  currency: string;
  status: 'processing' | 'requires_action';
  /** Stripe's `next_action` while the customer must act (3-D Secure), else null. */
  nextAction: Record<string, unknown> | null;
}

/** What a failed authorization key stores, so every later attempt answers with the same failure. */
export type AuthorizationFailure =
  | { failure: typeof FailureType.PaymentDeclined; code: string; declineCode: string | null; paymentIntentId: string | null }
  | { failure: typeof FailureType.PaymentIncomplete; paymentIntentId: string; status: string }
  | { failure: typeof FailureType.PaymentAttemptExpired; fenced: true; reason: string }
  | { failure: typeof FailureType.IdempotencyConflict; message: string };

export type DeclinedAuthorization = Extract<AuthorizationFailure, { failure: typeof FailureType.PaymentDeclined }>;

type AuthorizationResult = Hold | SettlingAuthorization | AuthorizationFailure;

/** Where an authorization stands, as our records say. */
export type Authorization =
  /** Never registered, or registered with no answer yet: only Stripe knows. */
  | { stage: 'unknown' }
  /** Accepted, not decided; `since` is when the key was registered (its deadlines count from it). */
  | { stage: 'settling'; settling: SettlingAuthorization; since: Date }
  | { stage: 'held'; hold: Hold }
  | { stage: 'failed'; failure: AuthorizationFailure };

function authorizationOf(record: KeyRecord<AuthorizationResult> | null): Authorization {
  const result = record?.result;
  if (!record || record.state === 'pending' || !result) return { stage: 'unknown' };
  if ('failure' in result) return { stage: 'failed', failure: result };
  if (result.status === 'requires_capture') return { stage: 'held', hold: result };
  return { stage: 'settling', settling: result, since: record.createdAt };
}

/**
 * Registers the authorization before anything leaves the building: claims the order's one payment
 * for this key (any other key is refused with OrderAlreadyCharged), then registers the key as
 * pending, or finds the answer an earlier attempt recorded. Two idempotent statements, not a
 * transaction: a crash between them leaves nothing the retry does not finish. The same key with
 * other parameters is an IdempotencyConflict (I7).
 */
export async function registerAuthorization(
  db: Queryable,
  request: { orderId: string; key: string; params: Stripe.PaymentIntentCreateParams } & Retention,
): Promise<{ authorization: Authorization; attempts: number; pendingSince: Date; keyLost: boolean }> {
  const { claimedBefore } = await claimCharge(db, request.orderId, request.key);
  const record = await registerKey<AuthorizationResult>(db, {
    scope: PaymentScope.authorize,
    key: request.key,
    requestHash: requestHash(request.params),
    retentionMs: request.retentionMs,
  });
  return {
    authorization: authorizationOf(record),
    attempts: record.attempts,
    pendingSince: record.createdAt,
    // The order's payment was claimed for this key by an earlier attempt, yet the key's record is
    // new: the reaper deleted it past its horizon, or that attempt stopped between the two
    // statements above. Only Stripe can say whether it placed a hold.
    keyLost: claimedBefore && record.attempts === 1 && record.state === 'pending',
  };
}

/**
 * Records, under an authorization key whose record was lost (reaped), the hold Stripe placed for
 * it and the saga has since captured: the key's answer is the hold it once was, and nothing else
 * changes (the capture is already on the books). Returns where the authorization stands.
 */
export async function recordCapturedAuthorization(db: Pool, key: string, paymentIntent: Stripe.PaymentIntent): Promise<Authorization> {
  const hold: Hold = {
    paymentIntentId: paymentIntent.id,
    amount: paymentIntent.amount,
    currency: paymentIntent.currency,
    status: 'requires_capture',
    captureBefore: captureBeforeOf(paymentIntent),
  };
  return withTransaction(db, async (client) => {
    if (!(await finishKey(client, PaymentScope.authorize, key, 'completed', hold))) return readAuthorization(client, key);
    return { stage: 'held', hold };
  });
}

/** Where the authorization stands (the compensations resolving it, the capture reading its hold). */
export async function readAuthorization(db: Queryable, key: string): Promise<Authorization> {
  return authorizationOf(await readKey<AuthorizationResult>(db, PaymentScope.authorize, key));
}

/**
 * Stripe placed the hold: the key's outcome, the hold memo and the order's `authorized` status
 * commit together. Returns where the authorization stands afterwards: this hold, or what the key
 * already held. A key fenced meanwhile (a compensation decided there was no payment while this
 * attempt talked to Stripe) stays fenced, and the caller voids the late hold.
 */
export async function recordHold(db: Pool, orderId: string, key: string, hold: Hold): Promise<Authorization> {
  return withTransaction(db, async (client) => {
    if (!(await finishKey(client, PaymentScope.authorize, key, 'completed', hold))) return readAuthorization(client, key);
    await insertHold(client, {
      orderId,
      paymentIntentId: hold.paymentIntentId,
      amountAuthorized: hold.amount,
      currency: hold.currency,
      captureBefore: hold.captureBefore,
    });
    await setOrderStatus(client, orderId, { status: 'authorized', paymentIntentId: hold.paymentIntentId });
    return { stage: 'held', hold };
  });
}

/**
 * Stripe accepted the authorization but has not decided it: the key keeps the PaymentIntent, so
 * a retry answers without calling Stripe and the settlement finishes the key. Returns where the
 * authorization stands afterwards (fenced, if a compensation closed the key meanwhile).
 */
export async function recordSettling(db: Pool, key: string, settling: SettlingAuthorization): Promise<Authorization> {
  return withTransaction(db, async (client) => {
    await markKeyProcessing(client, PaymentScope.authorize, key, settling);
    return readAuthorization(client, key);
  });
}

/**
 * The card was declined (at once, or after settling): the key's failure, the order's `declined`
 * status and its `order.failed` announcement commit together. Returns what the key holds
 * afterwards: this decline, or the outcome another attempt recorded first.
 */
export async function recordDecline(db: Pool, orderId: string, key: string, decline: DeclinedAuthorization): Promise<Authorization> {
  return withTransaction(db, async (client) => {
    if (!(await finishKey(client, PaymentScope.authorize, key, 'failed', decline))) {
      const existing = await readAuthorization(client, key);
      if (existing.stage !== 'unknown') return existing;
    }
    await setOrderStatus(client, orderId, { status: 'declined', reason: decline.declineCode ?? decline.code });
    await announceOrderFailed(client, orderId, { paymentIntentId: decline.paymentIntentId });
    return { stage: 'failed', failure: decline };
  });
}

/** Closes the key with a final failure that changes nothing else (a key conflict, an odd status). */
export async function recordAuthorizationFailure(
  db: Pool,
  key: string,
  failure: Extract<AuthorizationFailure, { failure: typeof FailureType.IdempotencyConflict | typeof FailureType.PaymentIncomplete }>,
): Promise<Authorization> {
  return withTransaction(db, async (client) => {
    if (await finishKey(client, PaymentScope.authorize, key, 'failed', failure)) return { stage: 'failed', failure };
    return readAuthorization(client, key);
  });
}

/**
 * Closes an authorization that never got an answer as failed, creating the record if no attempt
 * ever registered it, so that no later attempt under the key calls Stripe. Used when Stripe holds
 * no PaymentIntent for the order: by a compensation, and by a retry whose key outlived Stripe's
 * key retention. Returns where the authorization stands afterwards: an attempt that finished
 * first keeps its outcome.
 */
export async function fenceAuthorization(db: Pool, key: string, reason: string, retention: Retention): Promise<Authorization> {
  return countedFence(PaymentScope.authorize, withTransaction(db, async (client) =>
    authorizationOf(
      await fenceKey<AuthorizationResult>(client, {
        scope: PaymentScope.authorize,
        key,
        retentionMs: retention.retentionMs,
        result: { failure: FailureType.PaymentAttemptExpired, fenced: true, reason } satisfies AuthorizationFailure,
      }),
    ),
  ));
}

/** Counts a fence that holds after the transaction (an attempt that finished first keeps its outcome). */
async function countedFence<State extends { stage: string; failure?: object }>(scope: IdempotencyScope, fencing: Promise<State>): Promise<State> {
  const state = await fencing;
  if (state.stage === 'failed' && state.failure && 'fenced' in state.failure) countKeyFenced(scope);
  return state;
}

// ---------------------------------------------------------------------------------------------
// The capture: money moves, and the ledger says so

/** What Stripe captured of the hold. */
export interface Capture {
  paymentIntentId: string;
  amountCaptured: number;
  currency: string;
  status: 'succeeded';
}

export type CaptureFailure =
  | { failure: typeof FailureType.AuthorizationExpired; paymentIntentId: string; reason: string }
  | { failure: typeof FailureType.OrderNotConfirmable; fenced: true; reason: string }
  | { failure: typeof FailureType.IdempotencyConflict; message: string };

type CaptureResult = Capture | CaptureFailure;

export type CaptureState =
  | { stage: 'unknown' }
  | { stage: 'captured'; capture: Capture }
  | { stage: 'failed'; failure: CaptureFailure };

function captureOf(record: KeyRecord<CaptureResult> | null): CaptureState {
  const result = record?.result;
  if (!record || record.state === 'pending' || !result) return { stage: 'unknown' };
  return 'failure' in result ? { stage: 'failed', failure: result } : { stage: 'captured', capture: result };
}

/** The capture of a hold: the whole authorized amount, once. */
export function captureRequest(hold: Hold, metadata: Record<string, string>): Stripe.PaymentIntentCaptureParams {
  return { amount_to_capture: hold.amount, metadata };
}

function captureHash(hold: Hold): string {
  return requestHash({ paymentIntentId: hold.paymentIntentId, amountToCapture: hold.amount });
}

/**
 * Registers the capture's key as pending before Stripe is called, or finds the outcome an earlier
 * attempt recorded: one indexed statement either way.
 */
export async function registerCapture(db: Queryable, key: string, hold: Hold, retention: Retention): Promise<CaptureState> {
  return captureOf(
    await registerKey<CaptureResult>(db, { scope: PaymentScope.capture, key, requestHash: captureHash(hold), retentionMs: retention.retentionMs }),
  );
}

export async function readCapture(db: Queryable, key: string): Promise<CaptureState> {
  return captureOf(await readKey<CaptureResult>(db, PaymentScope.capture, key));
}

/**
 * Stripe captured: the key's outcome, the ledger's charge for the captured amount, the order's
 * `paid` status, the hold memo and the `order.paid` announcement commit together. A retry or a
 * second recorder lands on the ledger's unique key and writes nothing twice.
 *
 * If a compensation fenced the key while this attempt was talking to Stripe (only an attempt the
 * workflow had already given up on can do that), the money still moved: the books say so, the
 * fence is replaced by the truth, and the order is put in front of a person.
 */
export async function recordCapture(
  db: Pool,
  orderId: string,
  key: string,
  capture: Capture,
): Promise<{ capture: Capture; flaggedForReview: boolean }> {
  return withTransaction(db, async (client) => {
    let recorded = capture;
    let flaggedForReview = false;
    if (!(await finishKey(client, PaymentScope.capture, key, 'completed', capture))) {
      const existing = await readCapture(client, key);
      if (existing.stage === 'captured') {
        recorded = existing.capture;
      } else if (existing.stage === 'failed' && 'fenced' in existing.failure) {
        await reopenFencedKey(client, PaymentScope.capture, key, capture);
        await flagForReview(client, orderId, `capture of ${capture.paymentIntentId} landed after the saga fenced its key; refund it by hand`);
        flaggedForReview = true;
        countLateCaptureReview();
      } else {
        throw new Error(`capture key '${key}' is ${existing.stage} although Stripe captured ${capture.paymentIntentId}`);
      }
    }
    await postLedgerTransaction(client, {
      orderId,
      kind: 'charge',
      amountMinor: recorded.amountCaptured,
      currency: recorded.currency,
      stripeObjectId: recorded.paymentIntentId,
      idempotencyKey: key,
    });
    await setOrderStatus(client, orderId, { status: 'paid', paymentIntentId: recorded.paymentIntentId });
    await markHoldCaptured(client, recorded.paymentIntentId, recorded.amountCaptured);
    // The outbox rule: the money moved, so its announcement commits with it.
    await announceOrderPaid(client, orderId, { amountMinor: recorded.amountCaptured, currency: recorded.currency, paymentIntentId: recorded.paymentIntentId });
    if (flaggedForReview) await announceOrderFailed(client, orderId, { paymentIntentId: recorded.paymentIntentId });
    return { capture: recorded, flaggedForReview };
  });
}

/**
 * The hold lapsed before it was captured (Stripe expired it): the capture key fails for good and
 * the memo says expired. Returns where the capture stands afterwards.
 */
export async function recordExpiredHold(db: Pool, key: string, paymentIntentId: string, reason: string): Promise<CaptureState> {
  return withTransaction(db, async (client) => {
    const failure: CaptureFailure = { failure: FailureType.AuthorizationExpired, paymentIntentId, reason };
    if (!(await finishKey(client, PaymentScope.capture, key, 'failed', failure))) return readCapture(client, key);
    await markHoldReleased(client, paymentIntentId, 'expired');
    return { stage: 'failed', failure };
  });
}

/** Closes the capture key after a request Stripe refused outright (another payload: I7). */
export async function recordCaptureConflict(db: Pool, key: string, message: string): Promise<CaptureState> {
  return withTransaction(db, async (client) => {
    const failure: CaptureFailure = { failure: FailureType.IdempotencyConflict, message };
    if (await finishKey(client, PaymentScope.capture, key, 'failed', failure)) return { stage: 'failed', failure };
    return readCapture(client, key);
  });
}

/**
 * Closes a capture that Stripe never made (the hold is still uncaptured, or gone), creating the
 * record if no attempt registered it, so no later attempt under the key captures after the saga
 * decided nothing was captured. Returns where the capture stands afterwards.
 */
export async function fenceCapture(db: Pool, key: string, reason: string, retention: Retention): Promise<CaptureState> {
  return countedFence(PaymentScope.capture, withTransaction(db, async (client) =>
    captureOf(
      await fenceKey<CaptureResult>(client, {
        scope: PaymentScope.capture,
        key,
        retentionMs: retention.retentionMs,
        result: { failure: FailureType.OrderNotConfirmable, fenced: true, reason } satisfies CaptureFailure,
      }),
    ),
  ));
}

// ---------------------------------------------------------------------------------------------
// The void: a hold released, at no cost

export interface Void {
  paymentIntentId: string;
  status: 'canceled';
  cancellationReason: string | null;
  /** True when Stripe had already let the authorization lapse: nothing was left to release. */
  expired: boolean;
}

export type VoidState = { stage: 'unknown' } | { stage: 'voided'; voided: Void };

function voidOf(record: KeyRecord<Void> | null): VoidState {
  return record?.state === 'completed' && record.result ? { stage: 'voided', voided: record.result } : { stage: 'unknown' };
}

/** Where the void stands: a retry of a void that is done answers from here. */
export async function readVoid(db: Queryable, key: string): Promise<VoidState> {
  return voidOf(await readKey<Void>(db, PaymentScope.void, key));
}

/** Registers the void's key for this PaymentIntent before Stripe is called; a done void replays. */
export async function registerVoid(db: Queryable, key: string, paymentIntentId: string, retention: Retention): Promise<VoidState> {
  return voidOf(
    await registerKey<Void>(db, { scope: PaymentScope.void, key, requestHash: requestHash({ paymentIntentId }), retentionMs: retention.retentionMs }),
  );
}

/** Stripe cancelled the PaymentIntent (or had let it lapse): the key's outcome and the memo, together. */
export async function recordVoid(db: Pool, key: string, voided: Void): Promise<Void> {
  return withTransaction(db, async (client) => {
    if (!(await finishKey(client, PaymentScope.void, key, 'completed', voided))) {
      const existing = voidOf(await readKey<Void>(client, PaymentScope.void, key));
      if (existing.stage === 'voided') return existing.voided;
    }
    await markHoldReleased(client, voided.paymentIntentId, voided.expired ? 'expired' : 'voided');
    return voided;
  });
}

// ---------------------------------------------------------------------------------------------
// The refund: captured money returned, and the ledger reversed

export interface Refund {
  refundId: string;
  paymentIntentId: string;
  amount: number;
  currency: string;
}

export type RefundState = { stage: 'unknown' } | { stage: 'refunded'; refund: Refund };

function refundOf(record: KeyRecord<Refund> | null): RefundState {
  return record?.state === 'completed' && record.result ? { stage: 'refunded', refund: record.result } : { stage: 'unknown' };
}

/** The refund of a capture: everything that was captured, once. */
export function refundRequest(capture: Capture): { payment_intent: string; amount: number } {
  return { payment_intent: capture.paymentIntentId, amount: capture.amountCaptured };
}

/** Registers the refund's key before Stripe is called; a done refund replays from Postgres. */
export async function registerRefund(db: Queryable, key: string, capture: Capture, retention: Retention): Promise<RefundState> {
  return refundOf(
    await registerKey<Refund>(db, { scope: PaymentScope.refund, key, requestHash: requestHash(refundRequest(capture)), retentionMs: retention.retentionMs }),
  );
}

/**
 * Stripe refunded: the key's outcome, the ledger's reversal, the order's refund and the
 * `order.refunded` announcement commit together; the ledger's unique key makes a second recording
 * a no-op. Returns the refund as first recorded.
 */
export async function recordRefund(db: Pool, orderId: string, key: string, refund: Refund): Promise<Refund> {
  return withTransaction(db, async (client) => {
    let recorded = refund;
    if (!(await finishKey(client, PaymentScope.refund, key, 'completed', refund))) {
      const existing = refundOf(await readKey<Refund>(client, PaymentScope.refund, key));
      if (existing.stage === 'refunded') recorded = existing.refund;
    }
    await postLedgerTransaction(client, {
      orderId,
      kind: 'refund',
      amountMinor: recorded.amount,
      currency: recorded.currency,
      stripeObjectId: recorded.refundId,
      idempotencyKey: key,
    });
    await setOrderStatus(client, orderId, { status: 'compensating', refundId: recorded.refundId });
    await announceOrderRefunded(client, orderId, {
      amountMinor: recorded.amount,
      currency: recorded.currency,
      refundId: recorded.refundId,
      paymentIntentId: recorded.paymentIntentId,
    });
    return recorded;
  });
}

// ---------------------------------------------------------------------------------------------
// What Stripe says

/** Where a PaymentIntent stands at Stripe, in the protocol's terms. */
export type StripePayment =
  | { stage: 'held'; hold: Hold }
  | { stage: 'settling'; settling: SettlingAuthorization }
  | { stage: 'captured'; capture: Capture }
  | { stage: 'canceled'; paymentIntentId: string; cancellationReason: string | null; expired: boolean }
  | { stage: 'declined'; decline: DeclinedAuthorization }
  | { stage: 'incomplete'; paymentIntentId: string; status: string };

/**
 * Reads a PaymentIntent (retrieved or created with `expand: ['latest_charge']`, so the hold's
 * `capture_before` is at hand). Stripe is the source of truth whenever our records cannot say.
 */
export function stripePaymentOf(paymentIntent: Stripe.PaymentIntent): StripePayment {
  const { id, amount, currency } = paymentIntent;
  switch (paymentIntent.status) {
    case 'requires_capture':
      return { stage: 'held', hold: { paymentIntentId: id, amount: paymentIntent.amount_capturable || amount, currency, status: 'requires_capture', captureBefore: captureBeforeOf(paymentIntent) } };
    case 'processing':
    case 'requires_action':
      return {
        stage: 'settling',
        settling: {
          paymentIntentId: id,
          amount,
          currency,
          status: paymentIntent.status === 'processing' ? 'processing' : 'requires_action',
          nextAction: paymentIntent.status === 'requires_action' && paymentIntent.next_action ? { ...paymentIntent.next_action } : null,
        },
      };
    case 'succeeded':
      return { stage: 'captured', capture: { paymentIntentId: id, amountCaptured: paymentIntent.amount_received, currency, status: 'succeeded' } };
    case 'canceled':
      return {
        stage: 'canceled',
        paymentIntentId: id,
        cancellationReason: paymentIntent.cancellation_reason,
        // Stripe cancels an uncaptured authorization itself when it lapses.
        expired: paymentIntent.cancellation_reason === 'automatic',
      };
    default: {
      const error = paymentIntent.last_payment_error;
      if (paymentIntent.status === 'requires_payment_method' && error) {
        return {
          stage: 'declined',
          decline: { failure: FailureType.PaymentDeclined, code: error.code ?? 'card_declined', declineCode: error.decline_code ?? null, paymentIntentId: id },
        };
      }
      return { stage: 'incomplete', paymentIntentId: id, status: paymentIntent.status };
    }
  }
}

function captureBeforeOf(paymentIntent: Stripe.PaymentIntent): number {
  const charge = typeof paymentIntent.latest_charge === 'object' ? paymentIntent.latest_charge : null;
  const captureBefore = charge?.payment_method_details?.card?.capture_before;
  if (typeof captureBefore === 'number') return captureBefore;
  return (charge?.created ?? paymentIntent.created) + DEFAULT_AUTHORIZATION_WINDOW_SECONDS;
}
