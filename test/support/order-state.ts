// Test support: reads what PostgreSQL holds for one order (order row, ledger, stock, idempotency
// key, hold memo, outbox events) with plain SQL.
import { orderEventSchema } from '../../src/messaging/order-event.js';
import type { Queryable } from '../../src/platform/db/queryable.js';
import type { IdempotencyScope, KeyState } from '../../src/money/idempotency/activity-idempotency-store.js';

/** What PostgreSQL holds for one order, read with plain SQL so a test sees what the checker sees. */
export async function orderRow(db: Queryable, orderId: string) {
  const { rows } = await db.query<{ status: string; status_reason: string | null; payment_intent_id: string | null; refund_id: string | null }>(
    'select status, status_reason, payment_intent_id, refund_id from orders where order_id = $1',
    [orderId],
  );
  return rows[0];
}

export async function ledgerTransactions(db: Queryable, orderId: string) {
  const { rows } = await db.query<{ kind: string; amount_minor: number; stripe_object_id: string }>(
    'select kind, amount_minor::integer as amount_minor, stripe_object_id from ledger_transactions where order_id = $1 order by id',
    [orderId],
  );
  return rows;
}

/** The order's outbox rows, oldest first; each payload must parse as the published contract. */
export async function outboxEvents(db: Queryable, orderId: string) {
  const { rows } = await db.query<{ id: number; event_type: string; event_key: string; payload: Record<string, unknown> }>(
    'select id, event_type, event_key, payload from outbox where order_id = $1 order by id',
    [orderId],
  );
  for (const row of rows) orderEventSchema.parse(row.payload);
  return rows;
}

export async function stockAllocations(db: Queryable, orderId: string) {
  const { rows } = await db.query<{ quantity: number; state: string }>(
    'select quantity, state from stock_allocations where order_id = $1 order by created_at',
    [orderId],
  );
  return rows;
}

export async function availableStock(db: Queryable, sku: string): Promise<number | undefined> {
  const { rows } = await db.query<{ available: number }>('select available from inventory where sku = $1', [sku]);
  return rows[0]?.available;
}

/** The `activity_idempotency` record of one key: its state and how many attempts presented it. */
export async function keyRecord(db: Queryable, scope: IdempotencyScope, key: string) {
  const { rows } = await db.query<{ state: KeyState; attempts: number }>(
    'select state, attempts from activity_idempotency where scope = $1 and idempotency_key = $2',
    [scope, key],
  );
  return rows[0];
}


/** The order's row in the `payment_holds` memo: where its authorization stands. */
export async function paymentHold(db: Queryable, orderId: string) {
  const { rows } = await db.query<{ payment_intent_id: string; state: string; amount_authorized: number; amount_captured: number | null }>(
    'select payment_intent_id, state, amount_authorized::integer as amount_authorized, amount_captured::integer as amount_captured from payment_holds where order_id = $1',
    [orderId],
  );
  return rows[0];
}
