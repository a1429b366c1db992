/**
 * A Stripe event about an order's payment, as the API hands it to the order's workflow once the
 * event's receipt is committed. The workflow treats it as a wake-up, never as the truth: it asks
 * Stripe before it records anything.
 */
export interface PaymentEvent {
  /** Stripe's event ID (evt_...): the workflow ignores one it has already seen. */
  eventId: string;
  type: string;
  /** The PaymentIntent or Refund the event is about. */
  objectId: string;
  paymentIntentId: string | null;
  /** The object's status as the event tells it (`succeeded`, `payment_failed`, `refunded`, ...). */
  status: string;
  /** Stripe's `created`, Unix seconds. */
  created: number;
}

/** Signal name; the signal itself is defined with the workflow (src/workflows/messages.ts). */
export const PAYMENT_EVENT_SIGNAL = 'paymentEvent';
