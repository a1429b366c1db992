import type Stripe from 'stripe';
import { newId } from './ids.js';

export const EMULATED_API_VERSION = '2026-10-28.endive';

export type EmulatedEventType =
  | 'payment_intent.created'
  | 'payment_intent.succeeded'
  | 'payment_intent.payment_failed'
  | 'payment_intent.canceled'
  | 'charge.succeeded'
  | 'charge.failed'
  | 'charge.refunded'
  | 'refund.created';

export type EventSubject = Stripe.PaymentIntent | Stripe.Charge | Stripe.Refund;

/** Stripe's Event object, narrowed to what the emulator records. */
export interface EmulatedEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: EventSubject };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: EmulatedEventType;
}

export interface EventRequest {
  requestId: string;
  idempotencyKey: string | null;
}

/**
 * The events an account's requests produced, newest last. Webhook delivery will read from here;
 * until then they are visible through `GET /v1/events` and the control API.
 */
export class EventLog {
  readonly #events: EmulatedEvent[] = [];

  record(type: EmulatedEventType, subject: EventSubject, created: number, request: EventRequest): EmulatedEvent {
    const event: EmulatedEvent = {
      id: newId('evt'),
      object: 'event',
      api_version: EMULATED_API_VERSION,
      created,
      // A snapshot: later changes to the object must not rewrite what the event said.
      data: { object: structuredClone(subject) },
      livemode: false,
      pending_webhooks: 0,
      request: { id: request.requestId, idempotency_key: request.idempotencyKey },
      type,
    };
    this.#events.push(event);
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
