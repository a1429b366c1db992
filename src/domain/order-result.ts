/** Where an order ends. `needs_review` is reached by failure, the others by return. */
export type OrderOutcome = 'completed' | 'declined' | 'compensated';
/** Hold, then capture: pending -> reserved -> authorized -> paid (captured) -> completed. */
export type OrderStatus = 'pending' | 'reserved' | 'authorized' | 'paid' | OrderOutcome | 'compensating' | 'needs_review';

export interface OrderResult {
  status: OrderOutcome;
  orderId: string;
  paymentIntentId: string | null;
  refundId: string | null;
  /** Why the order did not complete: the decline code, the failed step, or 'cancelled'. */
  reason: string | null;
}

/** The saga's position, as the `status` query reports it. */
export type SagaStep =
  | 'validating'
  | 'recording-order'
  | 'reserving-stock'
  | 'authorizing'
  | 'capturing'
  /** The payment was accepted but not decided (asynchronous, 3-D Secure): waiting for Stripe's webhook. */
  | 'awaiting-payment'
  | 'confirming'
  | 'compensating'
  | 'done';

/**
 * What the checkout waits for: the authorization's outcome, known before the capture. Null until
 * it is known.
 */
export type PaymentOutcome =
  | { status: 'authorized'; paymentIntentId: string }
  /** The customer must act (3-D Secure): Stripe's `next_action` says how. */
  | { status: 'requires_action'; paymentIntentId: string; nextAction: Record<string, unknown> | null }
  | { status: 'declined'; declineCode: string }
  | { status: 'out_of_stock' }
  /** The order ended before any authorization was known (cancelled, a key conflict, ...): why. */
  | { status: 'failed'; reason: string };

export interface SagaStatus {
  step: SagaStep;
  orderStatus: OrderStatus;
  paymentIntentId: string | null;
  refundId: string | null;
  reason: string | null;
  /** The authorization's outcome once known; null before. */
  paymentOutcome?: PaymentOutcome | null;
}
