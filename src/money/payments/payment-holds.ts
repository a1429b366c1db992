// The payment_holds memo: where each order's authorization stands (held, captured, voided,
// expired), written in the payment keys' transactions.
import type { Queryable } from '../../platform/db/queryable.js';

/**
 * The `payment_holds` memo: where each order's authorization stands. A hold is not money, so it
 * lives here and not in the ledger. Written beside the payment keys, in their transactions.
 */
export type HoldState = 'held' | 'captured' | 'voided' | 'expired';

export interface HoldRow {
  orderId: string;
  paymentIntentId: string;
  amountAuthorized: number;
  currency: string;
  /** Unix seconds, as Stripe gives `capture_before`. */
  captureBefore: number;
}

/** Records a new hold; recording the same one again is a no-op. */
export async function insertHold(db: Queryable, hold: HoldRow): Promise<void> {
  await db.query(
    `insert into payment_holds (order_id, payment_intent_id, amount_authorized, currency, capture_before)
     values ($1, $2, $3, $4, to_timestamp($5))
     on conflict (order_id) do nothing`,
    [hold.orderId, hold.paymentIntentId, hold.amountAuthorized, hold.currency, hold.captureBefore],
  );
}

/** Marks the hold captured, for the amount Stripe captured. Only an open hold moves. */
export async function markHoldCaptured(db: Queryable, paymentIntentId: string, amountCaptured: number): Promise<void> {
  await db.query(
    `update payment_holds set state = 'captured', amount_captured = $2, updated_at = now()
      where payment_intent_id = $1 and state = 'held'`,
    [paymentIntentId, amountCaptured],
  );
}

/** Marks the hold released without a capture: voided by us, or expired at Stripe. */
export async function markHoldReleased(db: Queryable, paymentIntentId: string, state: 'voided' | 'expired'): Promise<void> {
  await db.query(
    `update payment_holds set state = $2, updated_at = now() where payment_intent_id = $1 and state = 'held'`,
    [paymentIntentId, state],
  );
}

/** Holds of finished orders that are still open: what I8 forbids, as our records see it. */
export async function openHoldsOfFinishedOrders(db: Queryable, orderIds: string[] | null): Promise<{ orderId: string; paymentIntentId: string }[]> {
  const { rows } = await db.query<{ order_id: string; payment_intent_id: string }>(
    `select h.order_id, h.payment_intent_id from payment_holds h join orders o using (order_id)
      where h.state = 'held' and o.status in ('completed', 'declined', 'compensated', 'needs_review')
        and ($1::text[] is null or h.order_id = any($1))`,
    [orderIds],
  );
  return rows.map((row) => ({ orderId: row.order_id, paymentIntentId: row.payment_intent_id }));
}
