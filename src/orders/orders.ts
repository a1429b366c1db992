// The orders table: records an order once per ID (I7), claims its one charge, and moves its
// status forward only (a late attempt or a reset run cannot move it back).
import type { Queryable } from '../platform/db/queryable.js';
import type { OrderInput } from '../domain/order-input.js';
import type { OrderStatus } from '../domain/order-result.js';
import { IdempotencyConflictError, OrderAlreadyChargedError, UnknownOrderError } from '../domain/failures.js';
import { requestHash } from '../money/idempotency/request-hash.js';

function orderHash(order: OrderInput): string {
  return requestHash({
    orderId: order.orderId,
    tenantId: order.tenantId,
    customerId: order.customerId,
    amount: order.amount,
    currency: order.currency,
    paymentMethod: order.paymentMethod,
    sku: order.sku,
    quantity: order.quantity,
  });
}

/**
 * Records the order once. Recording it again with the same payload is a no-op; the same order
 * ID with another payload throws IdempotencyConflictError instead of reusing the first order.
 */
export async function recordOrder(db: Queryable, order: OrderInput, workflowId: string): Promise<void> {
  const hash = orderHash(order);
  const { rows } = await db.query<{ request_hash: string }>(
    `with inserted as (
       insert into orders (order_id, customer_id, amount_minor, currency, sku, quantity, request_hash, workflow_id, tenant_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       on conflict (order_id) do nothing
       returning request_hash)
     select request_hash from inserted
     union all
     select request_hash from orders where order_id = $1 and not exists (select 1 from inserted)`,
    [order.orderId, order.customerId, order.amount, order.currency, order.sku, order.quantity, hash, workflowId, order.tenantId],
  );
  if (rows[0]?.request_hash !== hash) throw new IdempotencyConflictError('order', order.orderId);
}

/**
 * Claims the order's one charge for `chargeKey`. The conditional update holds the row lock, so
 * of two keys racing for one order exactly one wins; the loser gets OrderAlreadyChargedError.
 * Claiming again with the winning key is a no-op, which is what every retry does; it answers
 * `claimedBefore: true`, so a caller whose own record of the key is gone can tell.
 */
export async function claimCharge(db: Queryable, orderId: string, chargeKey: string): Promise<{ claimedBefore: boolean }> {
  const { rows, rowCount } = await db.query<{ previous: string | null }>(
    `update orders o set charge_key = $2, updated_at = now()
       from (select charge_key as previous from orders where order_id = $1 for update) prev
      where o.order_id = $1 and (o.charge_key is null or o.charge_key = $2)
     returning prev.previous`,
    [orderId, chargeKey],
  );
  if (rowCount === 1) return { claimedBefore: rows[0]?.previous === chargeKey };
  const { rowCount: exists } = await db.query('select 1 from orders where order_id = $1', [orderId]);
  throw exists === 1 ? new OrderAlreadyChargedError(orderId) : new UnknownOrderError(orderId);
}

export interface OrderStatusChange {
  status: OrderStatus;
  reason?: string | null;
  paymentIntentId?: string;
  refundId?: string;
}

/**
 * The statuses an order may move to each status from. Moves only go forward, and terminal
 * statuses are final, so a late attempt, a replay or a reset run cannot move an order back:
 * a charge recorded late cannot turn a compensating order into a paid one. Each status may
 * also be written again (a retry), which only fills in missing IDs.
 */
const ALLOWED_FROM: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['pending'],
  // Hold, then capture: pending -> reserved -> authorized -> paid -> completed.
  reserved: ['pending', 'reserved'],
  authorized: ['reserved', 'authorized'],
  paid: ['authorized', 'paid'],
  completed: ['paid', 'completed'],
  declined: ['pending', 'reserved', 'declined'],
  compensating: ['pending', 'reserved', 'authorized', 'paid', 'compensating'],
  compensated: ['compensating', 'compensated'],
  needs_review: ['pending', 'reserved', 'authorized', 'paid', 'compensating', 'needs_review'],
};

/**
 * Moves the order's status if the move is allowed from where it stands. Returns false when it
 * was not (the order is elsewhere, or unknown); callers for whom that matters check it.
 */
export async function setOrderStatus(db: Queryable, orderId: string, change: OrderStatusChange): Promise<boolean> {
  const { rowCount } = await db.query(
    `update orders
        set status = $2,
            status_reason = coalesce($3, status_reason),
            payment_intent_id = coalesce($4, payment_intent_id),
            refund_id = coalesce($5, refund_id),
            updated_at = now()
      where order_id = $1 and status = any($6::text[])`,
    [orderId, change.status, change.reason ?? null, change.paymentIntentId ?? null, change.refundId ?? null, ALLOWED_FROM[change.status]],
  );
  return rowCount === 1;
}

/** The order's current status, or null for an unknown order. */
export async function orderStatus(db: Queryable, orderId: string): Promise<OrderStatus | null> {
  const { rows } = await db.query<{ status: OrderStatus }>('select status from orders where order_id = $1', [orderId]);
  return rows[0]?.status ?? null;
}

/** The order's line (what it takes from stock, and whose stock), or null for an unknown order. */
export async function orderLine(db: Queryable, orderId: string): Promise<{ tenantId: string; sku: string; quantity: number } | null> {
  const { rows } = await db.query<{ tenantId: string; sku: string; quantity: number }>(
    'select tenant_id as "tenantId", sku, quantity from orders where order_id = $1',
    [orderId],
  );
  return rows[0] ?? null;
}

/**
 * Puts an order in front of a person whatever its status: used only when the records contradict
 * a decision already taken (money moved after the saga decided it had not).
 */
export async function flagForReview(db: Queryable, orderId: string, reason: string): Promise<void> {
  await db.query(`update orders set status = 'needs_review', status_reason = $2, updated_at = now() where order_id = $1`, [
    orderId,
    reason,
  ]);
}

/** Where an order stands, as its reader sees it; null while (or if) the worker has not recorded it. */
export interface OrderProgress {
  status: OrderStatus;
  statusReason: string | null;
  paymentIntentId: string | null;
  refundId: string | null;
}

/** The order's status, its reason and its Stripe IDs, or null for an order not recorded (yet). */
export async function orderProgress(db: Queryable, orderId: string): Promise<OrderProgress | null> {
  const { rows } = await db.query<{ status: OrderStatus; status_reason: string | null; payment_intent_id: string | null; refund_id: string | null }>(
    'select status, status_reason, payment_intent_id, refund_id from orders where order_id = $1',
    [orderId],
  );
  const row = rows[0];
  return row ? { status: row.status, statusReason: row.status_reason, paymentIntentId: row.payment_intent_id, refundId: row.refund_id } : null;
}
