// The shape of a Stripe event this service relies on, and how an event projects onto a
// PaymentIntent's or Refund's state ranked by how far along its life it is.
import { z } from 'zod';

/**
 * The parts of a Stripe Event this service reads. The signature proved who sent it; this proves
 * it has the shape the handlers rely on. Anything else in the payload passes, unread, and is never
 * stored (storedEventFields names what is).
 */
const idOrObject = z.union([z.string(), z.object({ id: z.string() }).loose()]).nullable().optional();

export const stripeEventSchema = z
  .object({
    id: z.string().regex(/^evt_\w+$/, 'event id must start with evt_'),
    object: z.literal('event'),
    type: z.string().min(1),
    created: z.number().int().positive(),
    data: z
      .object({
        object: z
          .object({
            id: z.string().min(1),
            object: z.string().min(1),
            status: z.string().nullable().optional(),
            metadata: z.record(z.string(), z.string()).nullable().optional(),
            payment_intent: idOrObject,
            amount: z.number().int().optional(),
            amount_refunded: z.number().int().optional(),
            refunded: z.boolean().optional(),
            currency: z.string().optional(),
          })
          .loose(),
      })
      .loose(),
  })
  .loose();

export type StripeEvent = z.output<typeof stripeEventSchema>;

/**
 * What the inbox keeps of an event (migration 018): its IDs, its type and time, and its object's
 * type, status and amounts. Never the rest: a charge's billing details (name, email, address,
 * phone), its card (brand, last4, expiry, fingerprint) or any other metadata a merchant set.
 */
export interface StoredEventFields {
  eventId: string;
  eventType: string;
  eventCreated: number;
  objectId: string;
  objectType: string;
  objectStatus: string | null;
  paymentIntentId: string | null;
  orderId: string | null;
  amount: number | null;
  amountRefunded: number | null;
  refunded: boolean | null;
  currency: string | null;
}

export function storedEventFields(event: StripeEvent): StoredEventFields {
  const subject = event.data.object;
  const currency = typeof subject.currency === 'string' && /^[a-z]{3}$/.test(subject.currency) ? subject.currency : null;
  return {
    eventId: event.id,
    eventType: event.type,
    eventCreated: event.created,
    objectId: subject.id,
    objectType: subject.object,
    objectStatus: subject.status ?? null,
    paymentIntentId: paymentIntentIdOf(event),
    orderId: orderIdOf(event),
    amount: subject.amount ?? null,
    amountRefunded: subject.amount_refunded ?? null,
    refunded: subject.refunded ?? null,
    currency,
  };
}

/**
 * The state an event's kept fields project to: the same as projectEvent of the whole event, so what
 * the inbox keeps is all the ordering of states ever needs (test/bench/scale-seed.test.ts proves it
 * on the seeded events, test/webhooks/stripe-webhook-inbox.test.ts on delivered ones).
 */
export function projectStoredEvent(stored: StoredEventFields): ObjectState | null {
  return projectEvent({
    id: stored.eventId,
    object: 'event',
    type: stored.eventType,
    created: stored.eventCreated,
    data: {
      object: {
        id: stored.objectId,
        object: stored.objectType,
        status: stored.objectStatus,
        metadata: stored.orderId === null ? null : { order_id: stored.orderId },
        payment_intent: stored.objectType === 'payment_intent' ? null : stored.paymentIntentId,
        ...(stored.amount !== null && { amount: stored.amount }),
        ...(stored.amountRefunded !== null && { amount_refunded: stored.amountRefunded }),
        ...(stored.refunded !== null && { refunded: stored.refunded }),
      },
    },
  });
}

/** How far along its life an object is: a state is replaced only by one further along, or newer. */
export interface ObjectState {
  objectId: string;
  objectType: 'payment_intent' | 'refund';
  paymentIntentId: string | null;
  orderId: string | null;
  status: string;
  rank: number;
  amountRefunded: number | null;
}

/**
 * A PaymentIntent moves forward through these, whatever order their events arrive in: it never
 * returns from succeeded to processing, and a refund only follows a success. A decline ranks
 * below the end because Stripe lets a failed PaymentIntent be confirmed again. A hold
 * (`amount_capturable_updated`, status requires_capture) ranks with it, below its own end:
 * captured (succeeded) or voided (canceled); a hold never fails, so the newer of the two stands.
 */
const PAYMENT_INTENT_RANK: Readonly<Record<string, { status: string; rank: number }>> = {
  'payment_intent.created': { status: 'created', rank: 0 },
  'payment_intent.requires_action': { status: 'requires_action', rank: 1 },
  'payment_intent.processing': { status: 'processing', rank: 1 },
  'payment_intent.payment_failed': { status: 'payment_failed', rank: 2 },
  'payment_intent.amount_capturable_updated': { status: 'requires_capture', rank: 2 },
  'payment_intent.canceled': { status: 'canceled', rank: 3 },
  'payment_intent.succeeded': { status: 'succeeded', rank: 3 },
};

const REFUND_RANK: Readonly<Record<string, number>> = {
  pending: 1,
  requires_action: 1,
  succeeded: 2,
  failed: 3,
  canceled: 3,
};

/**
 * The statuses after which an object's state is settled: nothing Stripe sends later can move it
 * back, so once it has not changed for the inbox horizon the reaper deletes it, and the event
 * that was its latest word with it. A PaymentIntent that is succeeded or partially refunded can
 * still be refunded (further along: a new state), and a failed one confirmed again.
 */
export const SETTLED_STATUSES = {
  payment_intent: ['succeeded', 'canceled', 'partially_refunded', 'refunded', 'payment_failed'],
  refund: ['succeeded', 'failed', 'canceled'],
} as const;

function idOf(value: z.output<typeof idOrObject>): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

/** The order an event concerns: every PaymentIntent and Refund the saga creates carries `order_id`. */
export function orderIdOf(event: StripeEvent): string | null {
  return event.data.object.metadata?.order_id ?? null;
}

/** The PaymentIntent an event concerns, directly or through its charge or refund. */
export function paymentIntentIdOf(event: StripeEvent): string | null {
  const subject = event.data.object;
  return subject.object === 'payment_intent' ? subject.id : idOf(subject.payment_intent);
}

/**
 * What the event says about the state of a PaymentIntent or Refund, or null for an event this
 * service records but draws no state from (charge.succeeded repeats payment_intent.succeeded).
 */
export function projectEvent(event: StripeEvent): ObjectState | null {
  const subject = event.data.object;
  const orderId = orderIdOf(event);
  const paymentIntentId = paymentIntentIdOf(event);
  const intent = PAYMENT_INTENT_RANK[event.type];
  if (intent && subject.object === 'payment_intent') {
    return { objectId: subject.id, objectType: 'payment_intent', paymentIntentId, orderId, ...intent, amountRefunded: null };
  }
  if (event.type === 'charge.refunded' && subject.object === 'charge' && paymentIntentId !== null) {
    // A refund moves the PaymentIntent past succeeded; more refunded is further along.
    const refunded = subject.refunded === true;
    return {
      objectId: paymentIntentId,
      objectType: 'payment_intent',
      paymentIntentId,
      orderId,
      status: refunded ? 'refunded' : 'partially_refunded',
      rank: refunded ? 5 : 4,
      amountRefunded: subject.amount_refunded ?? null,
    };
  }
  if (event.type.startsWith('refund.') && subject.object === 'refund' && typeof subject.status === 'string') {
    const rank = REFUND_RANK[subject.status];
    if (rank === undefined) return null;
    return { objectId: subject.id, objectType: 'refund', paymentIntentId, orderId, status: subject.status, rank, amountRefunded: null };
  }
  return null;
}
