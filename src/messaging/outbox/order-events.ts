import type { PoolClient } from 'pg';
import { FAILED_ORDER_STATUSES, type OrderEventType } from '../order-event.js';
import { activeTraceCarrier } from '../../platform/telemetry/trace-propagation.js';

/**
 * The outbox rule: a transaction that changes an order's money or status also writes the event
 * announcing it, in the same transaction, so the change and its announcement commit together or
 * not at all. The dispatcher publishes what committed; nothing publishes what did not.
 *
 * Each order has at most one event of each type (a unique index), and every write here is
 * `on conflict do nothing`: a retried activity or a replayed transaction never announces twice,
 * and the first write's payload stands.
 *
 * The row keeps the trace context of the span writing it (the activity attempt's, when tracing
 * is on), so the dispatcher's publish and the consumer's handling join that trace.
 */

export interface ChargeAnnouncement {
  amountMinor: number;
  currency: string;
  paymentIntentId: string;
}

export interface RefundAnnouncement {
  amountMinor: number;
  currency: string;
  refundId: string;
  paymentIntentId: string | null;
}

interface EventFields {
  amountMinor?: number;
  currency?: string;
  paymentIntentId?: string | null;
  refundId?: string | null;
}

/** `order.paid`: written with the ledger's charge. */
export function announceOrderPaid(client: PoolClient, orderId: string, charge: ChargeAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.paid', orderId, charge, null);
}

/** `order.refunded`: written with the ledger's reversal of the charge. */
export function announceOrderRefunded(client: PoolClient, orderId: string, refund: RefundAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.refunded', orderId, refund, null);
}

/**
 * `order.failed`: written with the status change that ended the order declined, compensated or
 * needs_review. Writes nothing unless the order, as this transaction sees it, stands in one of
 * those statuses: a move that was refused (the order had already completed) announces nothing.
 */
export function announceOrderFailed(
  client: PoolClient,
  orderId: string,
  details: { paymentIntentId?: string | null } = {},
): Promise<boolean> {
  return insertOrderEvent(client, 'order.failed', orderId, details, FAILED_ORDER_STATUSES);
}

/**
 * One statement: the payload is the order row as this transaction sees it (after its own
 * status change), with the money movement's own fields laid over it, and the active trace
 * context (null with tracing off) beside it.
 */
async function insertOrderEvent(
  client: PoolClient,
  eventType: OrderEventType,
  orderId: string,
  fields: EventFields,
  requiredStatuses: readonly string[] | null,
): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into outbox (event_type, order_id, payload, trace_context)
     select $2::text, o.order_id,
            jsonb_build_object(
              'event_type', $2::text,
              'order_id', o.order_id,
              'status', o.status,
              'amount_minor', coalesce($3::bigint, o.amount_minor),
              'currency', coalesce($4::text, o.currency),
              'payment_intent_id', coalesce($5::text, o.payment_intent_id),
              'refund_id', coalesce($6::text, o.refund_id),
              'reason', o.status_reason,
              'occurred_at', now()),
            $8::jsonb
       from orders o
      where o.order_id = $1 and ($7::text[] is null or o.status = any($7::text[]))
     on conflict (order_id, event_type) do nothing`,
    [
      orderId,
      eventType,
      fields.amountMinor ?? null,
      fields.currency ?? null,
      fields.paymentIntentId ?? null,
      fields.refundId ?? null,
      requiredStatuses,
      activeTraceCarrier(),
    ],
  );
  return rowCount === 1;
}
