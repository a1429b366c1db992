// Applies one order event as a receipt row, with its inbox claim in the same transaction, so a
// redelivered or republished event writes nothing.
import type { Pool, PoolClient } from 'pg';
import { withTransaction } from '../../platform/db/transaction.js';
import { claimInboxMessage } from '../inbox.js';
import type { OrderEvent, OrderEventType } from '../order-event.js';

/** The receipts service's name in the inbox. */
export const RECEIPTS_SUBSCRIBER = 'receipts';

export type ApplyOutcome = 'applied' | 'duplicate';

/**
 * The inbox rule: record the message in `processed_messages` and apply its effect in the same
 * transaction. A message seen before (a redelivery, a republish past the broker's duplicate
 * window, a second consumer racing on it) finds its inbox row and applies nothing.
 * Events are applied as they come: nothing here assumes that `order.paid` arrives before
 * `order.refunded`.
 */
export function applyOrderEvent(db: Pool, messageId: string, event: OrderEvent): Promise<ApplyOutcome> {
  return withTransaction(db, async (client) => {
    if (!(await claimInboxMessage(client, RECEIPTS_SUBSCRIBER, messageId))) return 'duplicate';
    await recordReceipt(client, messageId, event);
    return 'applied';
  });
}

/** Events whose receipt is for a Refund (the saga's compensation, a merchant's refund), not the PaymentIntent. */
const REFUND_EVENTS: ReadonlySet<OrderEventType> = new Set(['order.refunded', 'order.merchant_refunded', 'order.fraud_warning_refunded']);

async function recordReceipt(client: PoolClient, messageId: string, event: OrderEvent): Promise<void> {
  const stripeObjectId = REFUND_EVENTS.has(event.event_type) ? event.refund_id : event.payment_intent_id;
  await client.query(
    `insert into receipts
       (message_id, order_id, event_type, amount_minor, currency, stripe_object_id, order_status, reason, occurred_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      messageId,
      event.order_id,
      event.event_type,
      event.amount_minor,
      event.currency,
      stripeObjectId,
      event.status,
      event.reason,
      event.occurred_at,
    ],
  );
}
