// The saga's in-workflow record of the Stripe events the API signalled, deduplicated by event ID,
// from which a settling payment's wait takes its ending.
import type { PaymentEvent } from '../domain/payment-event.js';

/**
 * Events after which a settling PaymentIntent has an outcome worth asking Stripe about: a hold
 * placed (manual capture), a payment made (automatic capture), a failure, or a
 * cancellation.
 */
const SETTLING_ENDS = new Set([
  'payment_intent.amount_capturable_updated',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
]);

/**
 * The payment events the API signalled, each once (by event ID, since the API may signal an
 * event again after a failed hand-off attempt that in fact arrived).
 */
export class PaymentEvents {
  readonly #seen = new Set<string>();
  #waiting: PaymentEvent[] = [];

  receive(event: PaymentEvent): void {
    if (this.#seen.has(event.eventId)) return;
    this.#seen.add(event.eventId);
    if (SETTLING_ENDS.has(event.type)) this.#waiting.push(event);
  }

  /** The first unconsumed event that ends the settling of this PaymentIntent. */
  endOf(paymentIntentId: string): PaymentEvent | undefined {
    return this.#waiting.find((event) => event.paymentIntentId === paymentIntentId);
  }

  /** Takes the events about this PaymentIntent, so the next wait waits for a new one. */
  take(paymentIntentId: string): PaymentEvent | undefined {
    const first = this.endOf(paymentIntentId);
    this.#waiting = this.#waiting.filter((event) => event.paymentIntentId !== paymentIntentId);
    return first;
  }
}
