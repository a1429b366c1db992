// The order-event contract the outbox publishes and every consumer parses (order.paid,
// order.refunded, order.failed, order.merchant_refunded, order.refund_failed), and the subject each is published on.
import { z } from 'zod';

/**
 * The events the outbox announces: the contract between the order service and every
 * consumer. A consumer parses with `orderEventSchema` and never trusts a field it did not check.
 *
 * - `order.paid`: the capture, with the ledger's charge; once per order.
 * - `order.refunded`: the saga's compensation returned the capture, whole; once per order, and
 *   the order goes on to `compensated` (an `order.failed` follows).
 * - `order.failed`: the order ended declined, compensated or needs_review; once per order.
 * - `order.merchant_refunded`: a refund the merchant asked for (POST /v1/orders/:id/refunds), full
 *   or partial, of an order that stays `completed`; once per refund request, so an order may
 *   have several. Its `amount_minor` is the refund's, its `refund_id` the Stripe Refund's.
 * - `order.refund_failed`: a merchant refund request that was accepted (201 pending) and then
 *   refused (by Stripe, or because the order was no longer refundable); once per refund request.
 *   Its `amount_minor` is the request's, its `reason` the refusal's, and no money moved.
 * - `order.disputed`, `order.dispute_evidence_due`, `order.dispute_closed`: a dispute of the
 *   order's charge opened, its evidence deadline is near, and it ended (the `reason` is the
 *   outcome: won, lost, accepted, accepted_at_deadline, expired or closed); each once per dispute,
 *   with its `dispute_id` and the disputed amount.
 * - `order.fraud_warning_refunded`: an early fraud warning's policy refunded what was still
 *   refundable (`amount_minor`, `refund_id`, `refund_request_id`), before any dispute; once per warning.
 */
export const ORDER_EVENT_TYPES = [
  'order.paid',
  'order.refunded',
  'order.failed',
  'order.merchant_refunded',
  'order.refund_failed',
  'order.disputed',
  'order.dispute_evidence_due',
  'order.dispute_closed',
  'order.fraud_warning_refunded',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/** Order statuses that end an order without the goods: each is announced as `order.failed`. */
export const FAILED_ORDER_STATUSES = ['declined', 'compensated', 'needs_review'] as const;

export const orderEventSchema = z.object({
  event_type: z.enum(ORDER_EVENT_TYPES),
  order_id: z.string().min(1),
  /** The order's status when the event was written. */
  status: z.string().min(1),
  /** The charge's amount (paid), the refund's (refunded, merchant_refunded), or the order's (failed), in minor units. */
  amount_minor: z.number().int().positive(),
  currency: z.string().regex(/^[a-z]{3}$/, 'must be a lower-case ISO currency code such as usd'),
  payment_intent_id: z.string().nullable(),
  refund_id: z.string().nullable(),
  /** Why the order failed or is being compensated; null for a plain payment. */
  reason: z.string().nullable(),
  /** The merchant's refund request (`rfd_...`) a refund event is about; null (or absent, from older writers) otherwise. */
  refund_request_id: z.string().nullable().optional(),
  /** The Stripe Dispute (`dp_...`) a dispute event is about; null (or absent) otherwise. */
  dispute_id: z.string().nullable().optional(),
  /** When the change committed (the writing transaction's timestamp). */
  occurred_at: z.iso.datetime({ offset: true }),
});
export type OrderEvent = z.infer<typeof orderEventSchema>;

/** The subject an event is published on: `<prefix>.<event_type>`, e.g. `orders.order.paid`. */
export function subjectFor(subjectPrefix: string, eventType: OrderEventType): string {
  return `${subjectPrefix}.${eventType}`;
}
