// A dispute's protocol: what Stripe says of it, as one snapshot, recorded in one transaction with
// the money it moved and the events it owes (the disputes table of migration 022).
import type { Pool, PoolClient } from 'pg';
import type Stripe from 'stripe';
import type { Queryable } from '../../platform/db/queryable.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { LedgerDuplicateError } from '../../domain/failures.js';
import { postLedgerTransaction, type DisputeLedgerKind } from '../ledger/ledger.js';
import { announceDisputeClosed, announceDisputed, announceDisputeEvidenceDue } from '../../messaging/outbox/order-events.js';

/**
 * A dispute is Stripe's to decide; ours is to book what it moved and to answer in time. Every
 * transition below is driven by a snapshot of the dispute as Stripe returns it now, never by the
 * webhook that woke the workflow, so duplicates, reorderings (`closed` before `created`) and
 * lost deliveries all lead to the same books:
 *
 *   opened      first sight: the row, and `order.disputed`
 *   withdrawn   Stripe's withdrawal: the amount (dispute_withdrawal) and the fee (dispute_fee)
 *   reinstated  won: the amount back (dispute_reinstatement); a lost dispute books nothing more
 *   closed      won, lost or closed: the outcome, and `order.dispute_closed`
 *
 * Each entry's key is the dispute workflow's original run ID plus the entry's step ID, and its
 * Stripe object is the balance transaction (the fee's, the dispute): a replay meets the key, and
 * a second run (after an operator's reset, or a failed run restarted) meets the object, booked
 * once either way. Everything of one snapshot commits together.
 */
export type DisputeOutcome = 'won' | 'lost' | 'accepted' | 'accepted_at_deadline' | 'expired' | 'closed';

/** What the workflow did that Stripe's snapshot does not say: it decides the recorded outcome of a lost dispute. */
export type DisputeCloser = 'merchant' | 'deadline_policy' | 'left_to_lose';

export interface DisputeSnapshot {
  disputeId: string;
  paymentIntentId: string;
  amount: number;
  currency: string;
  reason: string;
  status: Stripe.Dispute.Status;
  isInquiry: boolean;
  /** `evidence_details.due_by`, in seconds. */
  dueBy: number | null;
  evidenceSubmitted: boolean;
  pastDue: boolean;
  created: number;
  balanceTransactions: { id: string; amount: number; fee: number; currency: string; reportingCategory: string }[];
}

export interface DisputeKeys {
  withdrawal: string;
  fee: string;
  reinstatement: string;
}

export interface DisputeRecord {
  disputeId: string;
  orderId: string;
  paymentIntentId: string;
  amount: number;
  currency: string;
  reason: string;
  status: string;
  isInquiry: boolean;
  evidenceDueBy: Date | null;
  evidenceSubmitted: boolean;
  outcome: DisputeOutcome | null;
  openedAt: Date;
  closedAt: Date | null;
}

const CLOSED_STATUSES: ReadonlySet<string> = new Set(['won', 'lost', 'warning_closed']);

export function isClosed(status: string): boolean {
  return CLOSED_STATUSES.has(status);
}

/** The snapshot of a Stripe Dispute this protocol reads. */
export function snapshotOf(dispute: Stripe.Dispute): DisputeSnapshot {
  const paymentIntent = typeof dispute.payment_intent === 'string' ? dispute.payment_intent : (dispute.payment_intent?.id ?? null);
  if (!paymentIntent) throw new Error(`dispute ${dispute.id} names no PaymentIntent`);
  return {
    disputeId: dispute.id,
    paymentIntentId: paymentIntent,
    amount: dispute.amount,
    currency: dispute.currency,
    reason: dispute.reason,
    status: dispute.status,
    isInquiry: dispute.status.startsWith('warning_') || dispute.payment_method_details?.card?.case_type === 'inquiry',
    dueBy: dispute.evidence_details.due_by,
    evidenceSubmitted: dispute.evidence_details.submission_count > 0,
    pastDue: dispute.evidence_details.past_due,
    created: dispute.created,
    balanceTransactions: dispute.balance_transactions.map((txn) => ({
      id: txn.id,
      amount: txn.amount,
      fee: txn.fee,
      currency: txn.currency,
      reportingCategory: txn.reporting_category,
    })),
  };
}

/** The entries a snapshot's balance transactions call for: what I9 compares the ledger against, too. */
export function expectedDisputeEntries(snapshot: DisputeSnapshot): { kind: DisputeLedgerKind; amount: number; currency: string; stripeObjectId: string }[] {
  const entries: { kind: DisputeLedgerKind; amount: number; currency: string; stripeObjectId: string }[] = [];
  for (const txn of snapshot.balanceTransactions) {
    if (txn.amount < 0) {
      entries.push({ kind: 'dispute_withdrawal', amount: -txn.amount, currency: txn.currency, stripeObjectId: txn.id });
      if (txn.fee > 0) entries.push({ kind: 'dispute_fee', amount: txn.fee, currency: txn.currency, stripeObjectId: snapshot.disputeId });
    } else if (txn.amount > 0) {
      entries.push({ kind: 'dispute_reinstatement', amount: txn.amount, currency: txn.currency, stripeObjectId: txn.id });
    }
  }
  return entries;
}

function outcomeOf(snapshot: DisputeSnapshot, closer: DisputeCloser | null): DisputeOutcome | null {
  if (snapshot.status === 'won') return 'won';
  if (snapshot.status === 'warning_closed') return 'closed';
  if (snapshot.status !== 'lost') return null;
  if (closer === 'merchant') return 'accepted';
  if (closer === 'deadline_policy') return 'accepted_at_deadline';
  if (snapshot.pastDue && !snapshot.evidenceSubmitted) return 'expired';
  return 'lost';
}

/**
 * Records one snapshot: opens the dispute on first sight, books every balance transaction not
 * booked yet, and closes it once Stripe has decided, in one transaction. Returns the dispute as
 * recorded.
 */
export async function recordDisputeSnapshot(
  db: Pool,
  orderId: string,
  snapshot: DisputeSnapshot,
  keys: DisputeKeys,
  closer: DisputeCloser | null,
): Promise<DisputeRecord> {
  return withTransaction(db, async (client) => {
    await opened(client, orderId, snapshot);
    for (const entry of expectedDisputeEntries(snapshot)) {
      await booked(client, orderId, entry, entry.kind === 'dispute_withdrawal' ? keys.withdrawal : entry.kind === 'dispute_fee' ? keys.fee : keys.reinstatement);
    }
    const outcome = outcomeOf(snapshot, closer);
    if (outcome !== null) await closed(client, orderId, snapshot, outcome);
    const record = await readDispute(client, snapshot.disputeId);
    if (!record) throw new Error(`dispute ${snapshot.disputeId} vanished inside its own transaction`);
    return record;
  });
}

/** Opened: the row (or its newer status), and `order.disputed` once. */
async function opened(client: PoolClient, orderId: string, snapshot: DisputeSnapshot): Promise<void> {
  const { rowCount } = await client.query(
    `insert into disputes (dispute_id, order_id, payment_intent_id, amount_minor, currency, reason, status, is_inquiry,
                           evidence_due_by, evidence_submitted, opened_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9::double precision), $10, to_timestamp($11::double precision))
     on conflict (dispute_id) do nothing`,
    [
      snapshot.disputeId,
      orderId,
      snapshot.paymentIntentId,
      snapshot.amount,
      snapshot.currency,
      snapshot.reason,
      snapshot.status,
      snapshot.isInquiry,
      snapshot.dueBy,
      snapshot.evidenceSubmitted,
      snapshot.created,
    ],
  );
  if (rowCount === 1) {
    await announceDisputed(client, orderId, snapshot.disputeId, { amountMinor: snapshot.amount, currency: snapshot.currency, reason: snapshot.reason });
    return;
  }
  // A closed dispute's row stays as it closed: an older snapshot read late cannot reopen it.
  await client.query(
    `update disputes set status = $2, evidence_due_by = to_timestamp($3::double precision), evidence_submitted = evidence_submitted or $4, updated_at = now()
      where dispute_id = $1 and closed_at is null`,
    [snapshot.disputeId, snapshot.status, snapshot.dueBy, snapshot.evidenceSubmitted],
  );
}

/** Withdrawn or reinstated: one ledger transaction per entry, booked once by key and by Stripe object. */
async function booked(client: PoolClient, orderId: string, entry: ReturnType<typeof expectedDisputeEntries>[number], key: string): Promise<void> {
  try {
    await postLedgerTransaction(client, { orderId, kind: entry.kind, amountMinor: entry.amount, currency: entry.currency, stripeObjectId: entry.stripeObjectId, idempotencyKey: key });
  } catch (error) {
    // Booked already under another run's key: the Stripe object's constraint said so, and
    // nothing was written (the posting's insert does nothing on a conflict).
    if (error instanceof LedgerDuplicateError && error.guard === 'ledger_transactions_stripe_object_id_key') return;
    throw error;
  }
}

/** Closed: the outcome once, and `order.dispute_closed` once. */
async function closed(client: PoolClient, orderId: string, snapshot: DisputeSnapshot, outcome: DisputeOutcome): Promise<void> {
  const { rowCount } = await client.query(
    `update disputes set status = $2, outcome = $3, closed_at = now(), updated_at = now()
      where dispute_id = $1 and closed_at is null`,
    [snapshot.disputeId, snapshot.status, outcome],
  );
  if (rowCount === 1) {
    await announceDisputeClosed(client, orderId, snapshot.disputeId, { amountMinor: snapshot.amount, currency: snapshot.currency, reason: outcome });
  }
}

/** The evidence deadline is near and nothing was submitted: `order.dispute_evidence_due`, once per dispute. */
export async function recordEvidenceDue(db: Pool, disputeId: string): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const record = await readDispute(client, disputeId);
    if (!record || record.closedAt !== null || record.evidenceSubmitted) return false;
    return announceDisputeEvidenceDue(client, record.orderId, disputeId, {
      amountMinor: record.amount,
      currency: record.currency,
      reason: `evidence due by ${record.evidenceDueBy?.toISOString() ?? 'unknown'}`,
    });
  });
}

/** The order a disputed PaymentIntent paid for, or null when it is none of ours. */
export async function orderOfPaymentIntent(db: Queryable, paymentIntentId: string): Promise<string | null> {
  const { rows } = await db.query<{ order_id: string }>('select order_id from orders where payment_intent_id = $1', [paymentIntentId]);
  return rows[0]?.order_id ?? null;
}

interface DisputeRow {
  dispute_id: string;
  order_id: string;
  payment_intent_id: string;
  amount_minor: string;
  currency: string;
  reason: string;
  status: string;
  is_inquiry: boolean;
  evidence_due_by: Date | null;
  evidence_submitted: boolean;
  outcome: DisputeOutcome | null;
  opened_at: Date;
  closed_at: Date | null;
}

const DISPUTE_COLUMNS =
  'dispute_id, order_id, payment_intent_id, amount_minor, currency, reason, status, is_inquiry, evidence_due_by, evidence_submitted, outcome, opened_at, closed_at';

function recordOf(row: DisputeRow): DisputeRecord {
  return {
    disputeId: row.dispute_id,
    orderId: row.order_id,
    paymentIntentId: row.payment_intent_id,
    amount: Number(row.amount_minor),
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    isInquiry: row.is_inquiry,
    evidenceDueBy: row.evidence_due_by,
    evidenceSubmitted: row.evidence_submitted,
    outcome: row.outcome,
    openedAt: row.opened_at,
    closedAt: row.closed_at,
  };
}

export async function readDispute(db: Queryable, disputeId: string): Promise<DisputeRecord | null> {
  const { rows } = await db.query<DisputeRow>(`select ${DISPUTE_COLUMNS} from disputes where dispute_id = $1`, [disputeId]);
  return rows[0] ? recordOf(rows[0]) : null;
}

/** The order's disputes, oldest first. */
export async function orderDisputes(db: Queryable, orderId: string): Promise<DisputeRecord[]> {
  const { rows } = await db.query<DisputeRow>(`select ${DISPUTE_COLUMNS} from disputes where order_id = $1 order by opened_at, dispute_id`, [orderId]);
  return rows.map(recordOf);
}
