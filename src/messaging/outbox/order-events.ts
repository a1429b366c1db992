// The outbox's writers: each order event written in the transaction of the change it announces.
import type { PoolClient } from 'pg';
import { FAILED_ORDER_STATUSES, type OrderEventType } from '../order-event.js';
import { isUniqueViolation } from '../../platform/db/unique-violation.js';
import { activeTraceCarrier } from '../../platform/telemetry/trace-propagation.js';

/**
 * The outbox rule: a transaction that changes an order's money or status also writes the event
 * announcing it, in the same transaction, so the change and its announcement commit together or
 * not at all. The dispatcher publishes what committed; nothing publishes what did not.
 *
 * An event is identified by its order, its type and its key (a unique index): the saga's events
 * have the key '' and so happen at most once per order; a merchant refund's key is its refund
 * request ID, so each refund request is announced once and an order may have several. Every
 * write here is `on conflict do nothing` on that identity: a retried activity or a replayed
 * transaction never announces twice, and the first write's payload stands.
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

/** A refund request that will not be made: what was asked, and why not. */
export interface RefundFailureAnnouncement {
  amountMinor: number;
  currency: string;
  reason: string;
}

interface EventFields {
  amountMinor?: number;
  currency?: string;
  paymentIntentId?: string | null;
  refundId?: string | null;
  /** Laid over the order's status reason (a refund's failure is the request's, not the order's). */
  reason?: string | null;
  /** The merchant's refund request the event is about, for the refund events. */
  refundRequestId?: string | null;
  /** The Stripe Dispute the event is about, for the dispute events. */
  disputeId?: string | null;
}

/** A dispute's announcement: its amount, and the reason (opened), the deadline (due) or the outcome (closed). */
export interface DisputeAnnouncement {
  amountMinor: number;
  currency: string;
  reason: string;
}

/** `order.paid`: written with the ledger's charge. */
export function announceOrderPaid(client: PoolClient, orderId: string, charge: ChargeAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.paid', orderId, charge, null);
}

/** `order.refunded`: written with the ledger's reversal of the charge. */
export function announceOrderRefunded(client: PoolClient, orderId: string, refund: RefundAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.refunded', orderId, refund, null);
}

/** The index that allowed one event of each type per order (migration 004), dropped by migration 015. */
const ONE_EVENT_PER_KIND_INDEX = 'outbox_one_event_per_kind';

/**
 * The database still has the index that allows one event of each type per order: migration 015
 * is not applied yet, and this order already has a merchant refund's event. Retryable (a plain
 * error): the refund's recording transaction rolled back whole, and it commits once 015 is in.
 */
export class OutboxContractPendingError extends Error {
  override readonly name = 'OutboxContractPendingError';
  constructor(readonly orderId: string) {
    super(
      `order '${orderId}' already has an order.merchant_refunded event and the outbox still has ${ONE_EVENT_PER_KIND_INDEX}; ` +
        'apply migration 015 (npm run db:migrate) once every worker runs this release, and this refund is recorded on its next attempt',
    );
  }
}

/**
 * `order.merchant_refunded`: written with the ledger's refund of a merchant refund, once per
 * refund request (the event's key). The order stays as it is (completed): the payload's status
 * says so, and its amount is the refund's.
 */
export async function announceMerchantRefund(
  client: PoolClient,
  orderId: string,
  refundRequestId: string,
  refund: RefundAnnouncement,
): Promise<boolean> {
  try {
    return await insertOrderEvent(client, 'order.merchant_refunded', orderId, { ...refund, refundRequestId }, null, refundRequestId);
  } catch (error) {
    if (isUniqueViolation(error, ONE_EVENT_PER_KIND_INDEX)) {
      throw new OutboxContractPendingError(orderId);
    }
    throw error;
  }
}

/**
 * `order.refund_failed`: written when a refund request that was accepted (201 pending) fails
 * later, with the request's reservation given back; once per refund request. The order stays
 * completed; the payload's amount is the request's and its reason the refusal's.
 */
export function announceRefundFailed(
  client: PoolClient,
  orderId: string,
  refundRequestId: string,
  failure: RefundFailureAnnouncement,
): Promise<boolean> {
  return insertOrderEvent(client, 'order.refund_failed', orderId, { ...failure, refundRequestId }, null, refundRequestId);
}

/**
 * `order.disputed`: a dispute was opened against the order's charge (first seen by its dispute
 * workflow, whichever webhook woke it); once per dispute. The order stays as it is.
 */
export function announceDisputed(client: PoolClient, orderId: string, disputeId: string, dispute: DisputeAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.disputed', orderId, { ...dispute, disputeId }, null, disputeId);
}

/** `order.dispute_evidence_due`: the evidence deadline is near and nothing is submitted; once per dispute. */
export function announceDisputeEvidenceDue(client: PoolClient, orderId: string, disputeId: string, dispute: DisputeAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.dispute_evidence_due', orderId, { ...dispute, disputeId }, null, disputeId);
}

/** `order.dispute_closed`: the dispute ended; its `reason` is the outcome (won, lost, accepted, ...); once per dispute. */
export function announceDisputeClosed(client: PoolClient, orderId: string, disputeId: string, dispute: DisputeAnnouncement): Promise<boolean> {
  return insertOrderEvent(client, 'order.dispute_closed', orderId, { ...dispute, disputeId }, null, disputeId);
}

/**
 * `order.fraud_warning_refunded`: an early fraud warning's policy refunded what was still
 * refundable, before any dispute; once per warning (the event's key), with the refund.
 */
export function announceFraudWarningRefunded(
  client: PoolClient,
  orderId: string,
  warningId: string,
  refund: RefundAnnouncement & { refundRequestId: string },
): Promise<boolean> {
  return insertOrderEvent(client, 'order.fraud_warning_refunded', orderId, { ...refund, reason: `early fraud warning ${warningId}` }, null, warningId);
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
 * context (null with tracing off) beside it. `eventKey` is '' for the events an order has at
 * most one of.
 */
async function insertOrderEvent(
  client: PoolClient,
  eventType: OrderEventType,
  orderId: string,
  fields: EventFields,
  requiredStatuses: readonly string[] | null,
  eventKey = '',
): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into outbox (event_type, order_id, event_key, payload, trace_context)
     select $2::text, o.order_id, $9::text,
            jsonb_build_object(
              'event_type', $2::text,
              'order_id', o.order_id,
              'status', o.status,
              'amount_minor', coalesce($3::bigint, o.amount_minor),
              'currency', coalesce($4::text, o.currency),
              'payment_intent_id', coalesce($5::text, o.payment_intent_id),
              'refund_id', coalesce($6::text, o.refund_id),
              'reason', coalesce($10::text, o.status_reason),
              'occurred_at', now())
            -- The refund request or dispute an event is about, only on the events that have one.
            || jsonb_strip_nulls(jsonb_build_object('refund_request_id', $11::text, 'dispute_id', $12::text)),
            $8::jsonb
       from orders o
      where o.order_id = $1 and ($7::text[] is null or o.status = any($7::text[]))
     on conflict (order_id, event_type, event_key) do nothing`,
    [
      orderId,
      eventType,
      fields.amountMinor ?? null,
      fields.currency ?? null,
      fields.paymentIntentId ?? null,
      fields.refundId ?? null,
      requiredStatuses,
      activeTraceCarrier(),
      eventKey,
      fields.reason ?? null,
      fields.refundRequestId ?? null,
      fields.disputeId ?? null,
    ],
  );
  return rowCount === 1;
}
