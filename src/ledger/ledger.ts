import type { PoolClient } from 'pg';
import { IdempotencyConflictError } from '../idempotency/idempotency-conflict-error.js';
import { requestHash } from '../idempotency/request-hash.js';
import { LedgerAccount } from './accounts.js';

export type LedgerKind = 'charge' | 'refund';

export interface LedgerEntry {
  orderId: string;
  kind: LedgerKind;
  amountMinor: number;
  currency: string;
  /** The PaymentIntent (charge) or Refund (refund) this entry mirrors. */
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
};

/**
 * Posts a balanced transaction once per idempotency key. Must run inside the caller's
 * transaction: the entry commits together with whatever outcome the caller records beside it.
 * A second posting under the same key, racing or late, waits on the unique index and then
 * finds the first one; with a different payload it throws IdempotencyConflictError.
 */
export async function postLedgerTransaction(client: PoolClient, entry: LedgerEntry): Promise<PostedTransaction> {
  const hash = requestHash({
    orderId: entry.orderId,
    kind: entry.kind,
    amountMinor: entry.amountMinor,
    currency: entry.currency,
    stripeObjectId: entry.stripeObjectId,
  });
  const inserted = await client.query<{ id: number }>(
    `insert into ledger_transactions
       (order_id, kind, amount_minor, currency, stripe_object_id, idempotency_key, request_hash)
     values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (idempotency_key) do nothing
     returning id`,
    [entry.orderId, entry.kind, entry.amountMinor, entry.currency, entry.stripeObjectId, entry.idempotencyKey, hash],
  );
  const insertedRow = inserted.rows[0];
  if (!insertedRow) {
    const { rows } = await client.query<{ id: number; request_hash: string }>(
      'select id, request_hash from ledger_transactions where idempotency_key = $1',
      [entry.idempotencyKey],
    );
    const existing = rows[0];
    if (!existing) throw new Error(`ledger transaction for key '${entry.idempotencyKey}' vanished`);
    if (existing.request_hash !== hash) throw new IdempotencyConflictError('ledger', entry.idempotencyKey);
    return { transactionId: existing.id, replayed: true };
  }
  const postings = POSTINGS[entry.kind];
  await client.query(
    `insert into ledger_postings (transaction_id, account, direction, amount_minor)
     select $1, account, direction, $4 from unnest($2::text[], $3::text[]) as p(account, direction)`,
    [insertedRow.id, postings.map((p) => p.account), postings.map((p) => p.direction), entry.amountMinor],
  );
  return { transactionId: insertedRow.id, replayed: false };
}
