// The double-entry ledger: one posting function, idempotent by key and guarded by constraints,
// so each Stripe charge and refund is booked exactly once.
import type { PoolClient } from 'pg';
import { IdempotencyConflictError, LedgerDuplicateError } from '../../domain/failures.js';
import { requestHash } from '../idempotency/request-hash.js';
import { LedgerAccount } from './accounts.js';

export type LedgerKind = 'charge' | 'refund' | DisputeLedgerKind;

/** A dispute's money: the withdrawal and its fee when it opens, the reinstatement when it is won. */
export type DisputeLedgerKind = 'dispute_withdrawal' | 'dispute_fee' | 'dispute_reinstatement';

export interface LedgerEntry {
  orderId: string;
  kind: LedgerKind;
  amountMinor: number;
  currency: string;
  /**
   * The Stripe object this entry mirrors: the PaymentIntent (charge), the Refund (refund), the
   * balance transaction (a dispute's withdrawal or reinstatement) or the Dispute (its fee).
   */
  stripeObjectId: string;
  /** The key of the activity that writes it; a retry or replay lands on its unique constraint. */
  idempotencyKey: string;
}

export interface PostedTransaction {
  transactionId: number;
  /** True when the key had already been posted and nothing new was written. */
  replayed: boolean;
}

interface Posting {
  account: LedgerAccount;
  direction: 'debit' | 'credit';
}

// A charge moves money from the customer into our Stripe balance; a refund is its mirror image.
const POSTINGS: Record<LedgerKind, Posting[]> = {
  charge: [
    { account: LedgerAccount.StripeBalance, direction: 'debit' },
    { account: LedgerAccount.CustomerPayments, direction: 'credit' },
  ],
  refund: [
    { account: LedgerAccount.CustomerPayments, direction: 'debit' },
    { account: LedgerAccount.StripeBalance, direction: 'credit' },
  ],
  dispute_withdrawal: [
    { account: LedgerAccount.DisputedPayments, direction: 'debit' },
    { account: LedgerAccount.StripeBalance, direction: 'credit' },
  ],
  dispute_fee: [
    { account: LedgerAccount.DisputeFees, direction: 'debit' },
    { account: LedgerAccount.StripeBalance, direction: 'credit' },
  ],
  dispute_reinstatement: [
    { account: LedgerAccount.StripeBalance, direction: 'debit' },
    { account: LedgerAccount.DisputedPayments, direction: 'credit' },
  ],
};

/**
 * Posts a balanced transaction once per idempotency key. Must run inside the caller's
 * transaction: the entry commits together with whatever outcome the caller records beside it.
 *
 * A second posting under the same key, racing or late, waits on the unique indexes and then
 * finds the first one; with a different payload it throws IdempotencyConflictError. The insert
 * names no conflict target on purpose: the table has three unique indexes (key, Stripe object,
 * one charge per order), and two racers with one key can meet first on any of them. With a
 * target, a meeting on another index is a unique violation, and a zombie attempt racing its own
 * retry would fail a paid order.
 */
export async function postLedgerTransaction(client: PoolClient, entry: LedgerEntry): Promise<PostedTransaction> {
  const hash = requestHash({
    orderId: entry.orderId,
    kind: entry.kind,
    amountMinor: entry.amountMinor,
    currency: entry.currency,
    stripeObjectId: entry.stripeObjectId,
  });
  const postings = POSTINGS[entry.kind];
  // The transaction and its postings in one statement (one round trip); the balance check is a
  // deferred constraint trigger, so it still runs at commit over both.
  const inserted = await client.query<{ id: number }>(
    `with posted as (
       insert into ledger_transactions
         (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash)
       values ($1, $2, $3, $4, $5, $6, $7)
       on conflict do nothing
       returning id, amount_minor
     )
     insert into ledger_postings (transaction_id, account, direction, amount_minor)
     select posted.id, p.account, p.direction, posted.amount_minor
       from posted, unnest($8::text[], $9::text[]) as p(account, direction)
     returning transaction_id as id`,
    [
      entry.orderId,
      entry.kind,
      entry.amountMinor,
      entry.currency,
      entry.stripeObjectId,
      entry.idempotencyKey,
      hash,
      postings.map((p) => p.account),
      postings.map((p) => p.direction),
    ],
  );
  const insertedRow = inserted.rows[0];
  if (!insertedRow) return answerFromExisting(client, entry, hash);
  return { transactionId: insertedRow.id, replayed: false };
}

/** The insert met an existing row: the same key (a replay, or a conflict) or another key's duplicate. */
async function answerFromExisting(client: PoolClient, entry: LedgerEntry, hash: string): Promise<PostedTransaction> {
  const { rows } = await client.query<{ id: number; request_hash: string }>(
    'select id, request_hash from ledger_transactions where idempotency_key = $1',
    [entry.idempotencyKey],
  );
  const existing = rows[0];
  if (existing) {
    if (existing.request_hash !== hash) throw new IdempotencyConflictError('ledger', entry.idempotencyKey);
    return { transactionId: existing.id, replayed: true };
  }
  const { rows: blockers } = await client.query<{ idempotency_key: string; same_object: boolean }>(
    `select idempotency_key, stripe_object_id = $1 as same_object from ledger_transactions
      where stripe_object_id = $1 or (kind = 'charge' and $2 = 'charge' and order_id = $3)
      order by same_object desc limit 1`,
    [entry.stripeObjectId, entry.kind, entry.orderId],
  );
  const blocker = blockers[0];
  if (!blocker) throw new Error(`ledger posting '${entry.idempotencyKey}' met a conflict that no row explains`);
  const guard = blocker.same_object ? 'ledger_transactions_stripe_object_id_key' : 'ledger_one_charge_per_order';
  throw new LedgerDuplicateError(entry.idempotencyKey, guard, blocker.idempotency_key);
}

/** A refund the ledger recorded for an order: the saga's compensation or a merchant's. */
export interface RecordedRefund {
  stripeRefundId: string;
  amountMinor: number;
  currency: string;
  createdAt: Date;
}

/** The order's refunds, in the order they were posted. `db` is the pool or a client: anything that runs a query. */
export async function orderRefunds(db: Pick<PoolClient, 'query'>, orderId: string): Promise<RecordedRefund[]> {
  const { rows } = await db.query<{ stripe_object_id: string; amount_minor: string; currency: string; created_at: Date }>(
    `select stripe_object_id, amount_minor, currency, created_at from ledger_transactions
      where order_id = $1 and kind = 'refund' order by id`,
    [orderId],
  );
  return rows.map((row) => ({ stripeRefundId: row.stripe_object_id, amountMinor: Number(row.amount_minor), currency: row.currency, createdAt: row.created_at }));
}
