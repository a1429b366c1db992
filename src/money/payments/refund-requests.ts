// Refund requests and the budget they draw on: the protocol that keeps merchant refunds within
// the capture, and the status a merchant follows each one by (tables of migration 021).
import type { Pool, PoolClient } from 'pg';
import type { Queryable } from '../../platform/db/queryable.js';
import { withTransaction } from '../../platform/db/transaction.js';
import { announceRefundFailed } from '../../messaging/outbox/order-events.js';

/**
 * A refund request's life, and the one rule over all of an order's requests:
 *
 *   reserve    the API, before the refund's workflow starts: the request is inserted as pending
 *              and its amount reserved from the order's budget (the capture, less every pending
 *              or succeeded request), in one transaction. A reservation the budget cannot hold
 *              is refused there and then, naming what is still refundable; nothing is inserted.
 *   succeed    the worker, with the ledger's refund: pending -> succeeded, with the Stripe Refund.
 *   fail       the worker, with the refund's refusal: pending -> failed, with why; its
 *              reservation is given back and `order.refund_failed` written, all together.
 *
 * The budget's row is the lock and its check constraint the guarantee: a reservation is one
 * conditional update of that row, so concurrent requests queue on it and each sees the others'
 * reservations. No request is checked first and written after.
 */
export type RefundRequestStatus = 'pending' | 'succeeded' | 'failed';

export interface RefundRequestRecord {
  refundRequestId: string;
  orderId: string;
  amount: number;
  currency: string;
  status: RefundRequestStatus;
  stripeRefundId: string | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RefundReservation {
  tenantId: string;
  orderId: string;
  refundRequestId: string;
  amount: number;
}

export type ReserveOutcome =
  /** Reserved now, or already (a retry of the same request after a crash): the request as it stands. */
  | { kind: 'reserved'; request: RefundRequestRecord }
  /** Refused: with every request in flight counted, only `refundable` is left. */
  | { kind: 'over-budget'; refundable: number; currency: string }
  /** The ledger has no capture for the order: nothing to refund yet. */
  | { kind: 'not-captured' };

interface RequestRow {
  refund_request_id: string;
  order_id: string;
  amount_minor: string;
  currency: string;
  status: RefundRequestStatus;
  stripe_refund_id: string | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const REQUEST_COLUMNS = 'refund_request_id, order_id, amount_minor, currency, status, stripe_refund_id, failure_reason, created_at, updated_at';

function recordOf(row: RequestRow): RefundRequestRecord {
  return {
    refundRequestId: row.refund_request_id,
    orderId: row.order_id,
    amount: Number(row.amount_minor),
    currency: row.currency,
    status: row.status,
    stripeRefundId: row.stripe_refund_id,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Reserve: the request and its reservation in one transaction, or the reason there is none. */
export async function reserveRefund(db: Pool, reservation: RefundReservation): Promise<ReserveOutcome> {
  return withTransaction(db, async (client) => {
    const existing = await findRefundRequestById(client, reservation.refundRequestId);
    if (existing) return { kind: 'reserved', request: existing };
    if (!(await openBudget(client, reservation))) return { kind: 'not-captured' };
    const raised = await client.query<{ currency: string }>(
      `update refund_budgets set reserved_minor = reserved_minor + $2, updated_at = now()
        where order_id = $1 and reserved_minor + $2 <= captured_minor
        returning currency`,
      [reservation.orderId, reservation.amount],
    );
    const budget = raised.rows[0];
    if (!budget) {
      const { rows } = await client.query<{ refundable: string; currency: string }>(
        'select captured_minor - reserved_minor as refundable, currency from refund_budgets where order_id = $1',
        [reservation.orderId],
      );
      const left = rows[0];
      return { kind: 'over-budget', refundable: Number(left?.refundable ?? 0), currency: left?.currency ?? '' };
    }
    return { kind: 'reserved', request: await insertRequest(client, reservation, reservation.amount, budget.currency) };
  });
}

/**
 * Reserve what is left: the whole of what is still refundable, for a request the project makes
 * itself (an early fraud warning's refund), in one transaction. `nothing-left` when every unit of
 * the capture is already reserved or refunded. A retry finds the request as first reserved.
 */
export async function reserveRemainingRefund(
  db: Pool,
  reservation: Omit<RefundReservation, 'amount'>,
): Promise<{ kind: 'reserved'; request: RefundRequestRecord } | { kind: 'nothing-left' } | { kind: 'not-captured' }> {
  return withTransaction(db, async (client) => {
    const existing = await findRefundRequestById(client, reservation.refundRequestId);
    if (existing) return { kind: 'reserved', request: existing };
    if (!(await openBudget(client, reservation))) return { kind: 'not-captured' };
    const { rows: taken } = await client.query<{ amount: string; currency: string }>(
      `with before as (
         select captured_minor, reserved_minor from refund_budgets where order_id = $1 for update
       )
       update refund_budgets b set reserved_minor = before.captured_minor, updated_at = now()
         from before
        where b.order_id = $1 and before.reserved_minor < before.captured_minor
        returning before.captured_minor - before.reserved_minor as amount, b.currency`,
      [reservation.orderId],
    );
    const left = taken[0];
    if (!left) return { kind: 'nothing-left' };
    return { kind: 'reserved', request: await insertRequest(client, reservation, Number(left.amount), left.currency) };
  });
}

/** The request's row, pending, for the amount just reserved. */
async function insertRequest(
  client: PoolClient,
  reservation: Pick<RefundReservation, 'refundRequestId' | 'tenantId' | 'orderId'>,
  amount: number,
  currency: string,
): Promise<RefundRequestRecord> {
  const { rows } = await client.query<RequestRow>(
    `insert into refund_requests (refund_request_id, tenant_id, order_id, amount_minor, currency)
     values ($1, $2, $3, $4, $5)
     returning ${REQUEST_COLUMNS}`,
    [reservation.refundRequestId, reservation.tenantId, reservation.orderId, amount, currency],
  );
  return recordOf(rows[0] as RequestRow);
}

/**
 * The order's budget, opened from the ledger's capture on its first refund request, with the
 * refunds already booked counted as reserved. False when the ledger has no capture for it.
 */
async function openBudget(client: PoolClient, reservation: Pick<RefundReservation, 'orderId' | 'tenantId'>): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into refund_budgets (order_id, tenant_id, currency, captured_minor, reserved_minor)
     select c.order_id, $2, c.currency, c.amount_minor,
            coalesce((select sum(r.amount_minor) from ledger_transactions r where r.order_id = c.order_id and r.kind = 'refund'), 0)
       from ledger_transactions c
      where c.order_id = $1 and c.kind = 'charge'
     on conflict (order_id) do nothing`,
    [reservation.orderId, reservation.tenantId],
  );
  if (rowCount === 1) return true;
  const { rows } = await client.query('select 1 from refund_budgets where order_id = $1', [reservation.orderId]);
  return rows.length === 1;
}

/**
 * Succeed: in the transaction that books the ledger's refund. A request with no row (asked for
 * before migration 021) has nothing to move. Returns whether this call moved it.
 */
export async function refundRequestSucceeded(client: PoolClient, refundRequestId: string, stripeRefundId: string): Promise<boolean> {
  const { rowCount } = await client.query(
    `update refund_requests set status = 'succeeded', stripe_refund_id = $2, updated_at = now()
      where refund_request_id = $1 and status = 'pending'`,
    [refundRequestId, stripeRefundId],
  );
  return rowCount === 1;
}

/**
 * Fail: in the transaction that records the refusal. The request leaves pending with its reason,
 * its reservation goes back to the budget and `order.refund_failed` is written, or, when the
 * request is no longer pending (a retry), nothing is. Returns whether this call moved it.
 */
export async function refundRequestFailed(client: PoolClient, refundRequestId: string, reason: string): Promise<boolean> {
  const { rows } = await client.query<{ order_id: string; amount_minor: string; currency: string }>(
    `with failed as (
       update refund_requests set status = 'failed', failure_reason = $2, updated_at = now()
        where refund_request_id = $1 and status = 'pending'
        returning order_id, amount_minor, currency
     ), released as (
       update refund_budgets b set reserved_minor = b.reserved_minor - f.amount_minor, updated_at = now()
         from failed f where b.order_id = f.order_id
     )
     select order_id, amount_minor, currency from failed`,
    [refundRequestId, reason],
  );
  const failed = rows[0];
  if (!failed) return false;
  await announceRefundFailed(client, failed.order_id, refundRequestId, {
    amountMinor: Number(failed.amount_minor),
    currency: failed.currency,
    reason,
  });
  return true;
}

/** A refund request as its tenant sees it, or null (another tenant's reads as missing). */
export async function findRefundRequest(db: Queryable, tenantId: string, refundRequestId: string): Promise<RefundRequestRecord | null> {
  const { rows } = await db.query<RequestRow>(
    `select ${REQUEST_COLUMNS} from refund_requests where refund_request_id = $1 and tenant_id = $2`,
    [refundRequestId, tenantId],
  );
  return rows[0] ? recordOf(rows[0]) : null;
}

/** A refund request by its ID alone: for the worker's own requests (an early fraud warning's). */
export async function findRefundRequestById(db: Queryable, refundRequestId: string): Promise<RefundRequestRecord | null> {
  const { rows } = await db.query<RequestRow>(`select ${REQUEST_COLUMNS} from refund_requests where refund_request_id = $1`, [refundRequestId]);
  return rows[0] ? recordOf(rows[0]) : null;
}

/** The order's refund requests, oldest first. */
export async function orderRefundRequests(db: Queryable, orderId: string): Promise<RefundRequestRecord[]> {
  const { rows } = await db.query<RequestRow>(`select ${REQUEST_COLUMNS} from refund_requests where order_id = $1 order by created_at, refund_request_id`, [
    orderId,
  ]);
  return rows.map(recordOf);
}
