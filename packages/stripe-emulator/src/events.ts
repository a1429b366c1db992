// Stripe's Event objects as the emulator records them: the event types it emits and each
// account's event log, which webhook delivery listens to.
import type Stripe from 'stripe';
import { newId } from './ids.js';

export const EMULATED_API_VERSION = '2026-10-28.endive';

export type EmulatedEventType =
  | 'payment_intent.created'
  | 'payment_intent.processing'
  | 'payment_intent.requires_action'
  | 'payment_intent.succeeded'
  | 'payment_intent.payment_failed'
  | 'payment_intent.amount_capturable_updated'
  | 'payment_intent.canceled'
  | 'charge.pending'
  | 'charge.succeeded'
  | 'charge.captured'
  | 'charge.expired'
  | 'charge.failed'
  | 'charge.refunded'
  | 'refund.created'
  | 'refund.updated'
  | 'charge.dispute.created'
  | 'charge.dispute.funds_withdrawn'
  | 'charge.dispute.updated'
  | 'charge.dispute.closed'
  | 'charge.dispute.funds_reinstated'
  | 'radar.early_fraud_warning.created';

export type EventSubject = Stripe.PaymentIntent | Stripe.Charge | Stripe.Refund | Stripe.Dispute | Stripe.Radar.EarlyFraudWarning;

/** Stripe's Event object, narrowed to what the emulator records. */
export interface EmulatedEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  /** `previous_attributes` (on `*.updated` events) holds the fields that changed, as they were. */
  data: { object: EventSubject; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: EmulatedEventType;
}

export interface EventRequest {
  /** Null for events Stripe raises on its own, such as an asynchronous payment settling. */
  requestId: string | null;
  idempotencyKey: string | null;
}

/** For events Stripe raises on its own (a dispute opening, a clock passing a deadline). */
export const NO_REQUEST: EventRequest = { requestId: null, idempotencyKey: null };

/** Called with each event as it is recorded; webhook delivery listens here. */
export type EventListener = (event: EmulatedEvent) => void;

/**
 * The events an account produced, newest last: visible through `GET /v1/events` and the
 * control API, and handed to the listener (webhook delivery) as they are recorded.
 */
export class EventLog {
  readonly #events: EmulatedEvent[] = [];

  constructor(private readonly listener: EventListener = () => undefined) {}

  record(
    type: EmulatedEventType,
    subject: EventSubject,
    created: number,
    request: EventRequest,
    previousAttributes?: Record<string, unknown>,
  ): EmulatedEvent {
    const event: EmulatedEvent = {
      id: newId('evt'),
      object: 'event',
      api_version: EMULATED_API_VERSION,
      created,
      // A snapshot: later changes to the object must not rewrite what the event said.
      data: { object: structuredClone(subject), ...(previousAttributes && { previous_attributes: previousAttributes }) },
      livemode: false,
      pending_webhooks: 0,
      request: { id: request.requestId, idempotency_key: request.idempotencyKey },
      type,
    };
    this.#events.push(event);
    this.listener(event);
    return event;
  }

  /** Newest first, the order of Stripe's lists. */
  newestFirst(): EmulatedEvent[] {
    return [...this.#events].reverse();
  }

  find(id: string): EmulatedEvent | undefined {
    return this.#events.find((event) => event.id === id);
  }
}
