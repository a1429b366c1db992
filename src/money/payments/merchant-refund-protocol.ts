// The merchant refund's protocol: its key, the claim on its refund request, and the named
// transitions that move them, after the saga's payment protocol (payment-protocol.ts).
import type { Pool } from 'pg';
import type { Queryable } from '../../platform/db/queryable.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { FailureType, IdempotencyConflictError } from '../../domain/failures.js';
import { finishKey, readKey, registerKey, type IdempotencyScope, type KeyRecord } from '../idempotency/activity-idempotency-store.js';
import { requestHash } from '../idempotency/request-hash.js';
import { postLedgerTransaction } from '../ledger/ledger.js';
import { orderProgress } from '../../orders/orders.js';
import { announceMerchantRefund } from '../../messaging/outbox/order-events.js';
import type { Retention } from './payment-protocol.js';
import { refundRequestFailed, refundRequestSucceeded } from './refund-requests.js';

/**
 * A refund the merchant asks for (POST /v1/orders/:id/refunds) of a completed order, full or
 * partial, in a `merchantRefund` workflow of its own. It runs the saga's three phases over two
 * records in `activity_idempotency`:
 *
 *   refund request claim       claimed for one key ──► refunded / refused, with that key
 *   (merchant_refund.request)      any other key is refused before Stripe is called
 *   merchant-refund key        registered ──► refunded: the ledger's refund and its
 *   (stripe.merchant_refund)       │            order.merchant_refunded event, in one transaction
 *                                  └──► refused: the order was not refundable, or Stripe said no
 *
 * 1. Register: claim the refund request for this key, then register the key as pending, or find
 *    the answer an earlier attempt (or another key, for the same refund request) recorded; an
 *    answered key is answered from Postgres without calling Stripe, refusals included.
 * 2. Call Stripe under the key (the activity's part).
 * 3. Record: the key's outcome, the claim's, the ledger's refund, the refund request's status
 *    (refund-requests.ts) and the refund's outbox event commit together, so a retry after the commit finds the answer and writes nothing twice.
 *
 * The key is the activity's (`<original run ID>/merchant-refund`, the one Stripe gets); the claim
 * is the refund request's (`<order ID>/<refund request ID>`), so a second workflow run for one
 * refund request (an operator's, or the API restarting a pending request after Temporal forgot
 * the first run) is answered with the first run's refund instead of making a second. The order
 * does not move: it stays completed, and its event says so.
 */
export const MerchantRefundScope = {
  refund: 'stripe.merchant_refund',
  request: 'merchant_refund.request',
} as const satisfies Record<string, IdempotencyScope>;

/** What the merchant asked for: the refund's identity and amount. */
export interface MerchantRefundRequest {
  orderId: string;
  /** The API's refund request ID (`rfd_...`): the intent, and the refund event's key. */
  refundRequestId: string;
  amount: number;
}

/** The keys the refund writes under: Stripe's and the store's, and the ledger's (the same key's `ledger` step). */
export interface MerchantRefundKeys {
  key: string;
  ledgerKey: string;
}

/** A refund Stripe made, as recorded. */
export interface MerchantRefund {
  refundId: string;
  paymentIntentId: string;
  amount: number;
  currency: string;
}

/** Why the refund will not be made: every later attempt answers with the same reason. */
export interface MerchantRefundRefusal {
  failure: typeof FailureType.NeedsReview;
  reason: string;
}

type MerchantRefundOutcome = MerchantRefund | MerchantRefundRefusal;

/** Where a merchant refund stands, as our records say. */
export type MerchantRefundState =
  /** Registered with no answer yet: only Stripe knows. */
  | { stage: 'unknown' }
  | { stage: 'refunded'; refund: MerchantRefund }
  | { stage: 'refused'; refusal: MerchantRefundRefusal }
  /** The refund request is claimed by another key whose refund has no answer yet. */
  | { stage: 'claimed-elsewhere'; claimKey: string };

function merchantRefundOf(record: KeyRecord<MerchantRefundOutcome> | null): MerchantRefundState {
  const result = record?.result;
  if (!record || record.state === 'pending' || !result) return { stage: 'unknown' };
  return 'failure' in result ? { stage: 'refused', refusal: result } : { stage: 'refunded', refund: result };
}

function claimKeyOf(request: MerchantRefundRequest): string {
  return `${request.orderId}/${request.refundRequestId}`;
}

/**
 * Phase 1. Claims the refund request for `key` (a claim another key holds answers with that
 * key's outcome, or `claimed-elsewhere` while it has none), then registers the key as pending or
 * finds its answer. Two idempotent statements, not a transaction, like the authorization's: a
 * crash between them leaves nothing the retry does not finish. The same key with another amount
 * is an IdempotencyConflict (I7).
 */
export async function registerMerchantRefund(
  db: Queryable,
  request: MerchantRefundRequest,
  key: string,
  retention: Retention,
): Promise<MerchantRefundState> {
  const claimKey = claimKeyOf(request);
  try {
    await registerKey(db, { scope: MerchantRefundScope.request, key: claimKey, requestHash: requestHash({ key }), retentionMs: retention.retentionMs });
  } catch (error) {
    if (!(error instanceof IdempotencyConflictError)) throw error;
    const elsewhere = merchantRefundOf(await readKey<MerchantRefundOutcome>(db, MerchantRefundScope.request, claimKey));
    return elsewhere.stage === 'unknown' ? { stage: 'claimed-elsewhere', claimKey } : elsewhere;
  }
  return merchantRefundOf(
    await registerKey<MerchantRefundOutcome>(db, {
      scope: MerchantRefundScope.refund,
      key,
      requestHash: requestHash(request),
      retentionMs: retention.retentionMs,
    }),
  );
}

/** The PaymentIntent a merchant refund draws on, or why the order cannot be refunded by the merchant. */
export async function refundablePayment(db: Queryable, orderId: string): Promise<{ paymentIntentId: string } | { refusal: string }> {
  const order = await orderProgress(db, orderId);
  if (order?.status === 'completed' && order.paymentIntentId) return { paymentIntentId: order.paymentIntentId };
  return { refusal: `order '${orderId}' is ${order ? `'${order.status}'` : 'not recorded'}; only a completed order can be refunded by the merchant` };
}

/**
 * The refund will not be made (the order is not refundable, or Stripe refused it): the key and
 * the claim close as failed together, so a retry or a reset answers the same refusal without
 * calling Stripe. Returns where the refund stands: an attempt that finished first keeps its outcome.
 */
export async function recordMerchantRefundRefusal(
  db: Pool,
  request: MerchantRefundRequest,
  key: string,
  reason: string,
): Promise<MerchantRefundState> {
  const refusal: MerchantRefundRefusal = { failure: FailureType.NeedsReview, reason };
  return withTransaction(db, async (client) => {
    if (!(await finishKey(client, MerchantRefundScope.refund, key, 'failed', refusal))) {
      return merchantRefundOf(await readKey<MerchantRefundOutcome>(client, MerchantRefundScope.refund, key));
    }
    await finishKey(client, MerchantRefundScope.request, claimKeyOf(request), 'failed', refusal);
    // The merchant follows the request: it fails with this reason, its reservation goes back, and
    // order.refund_failed is written, with the refusal.
    await refundRequestFailed(client, request.refundRequestId, reason);
    return { stage: 'refused', refusal };
  });
}

/**
 * Phase 3. Stripe refunded: the key's outcome, the claim's, the ledger's refund and the
 * `order.merchant_refunded` event (keyed by the refund request) commit together; the ledger's
 * unique key and the event's make a second recording a no-op. Returns the refund as first recorded.
 */
export async function recordMerchantRefund(
  db: Pool,
  request: MerchantRefundRequest,
  keys: MerchantRefundKeys,
  refund: MerchantRefund,
): Promise<MerchantRefund> {
  return withTransaction(db, async (client) => {
    let recorded = refund;
    if (!(await finishKey(client, MerchantRefundScope.refund, keys.key, 'completed', refund))) {
      const existing = merchantRefundOf(await readKey<MerchantRefundOutcome>(client, MerchantRefundScope.refund, keys.key));
      if (existing.stage !== 'refunded') {
        throw new Error(`merchant refund key '${keys.key}' is ${existing.stage} although Stripe made refund ${refund.refundId}`);
      }
      recorded = existing.refund;
    }
    await finishKey(client, MerchantRefundScope.request, claimKeyOf(request), 'completed', recorded);
    await refundRequestSucceeded(client, request.refundRequestId, recorded.refundId);
    await postLedgerTransaction(client, {
      orderId: request.orderId,
      kind: 'refund',
      amountMinor: recorded.amount,
      currency: recorded.currency,
      stripeObjectId: recorded.refundId,
      idempotencyKey: keys.ledgerKey,
    });
    // The outbox rule: the money moved, so its announcement commits with it, once per refund request.
    await announceMerchantRefund(client, request.orderId, request.refundRequestId, {
      amountMinor: recorded.amount,
      currency: recorded.currency,
      refundId: recorded.refundId,
      paymentIntentId: recorded.paymentIntentId,
    });
    return recorded;
  });
}
