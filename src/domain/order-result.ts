/** Where an order ends. `needs_review` is reached by failure, the others by return. */
export type OrderOutcome = 'completed' | 'declined' | 'compensated';
export type OrderStatus = 'pending' | 'paid' | 'allocated' | OrderOutcome | 'compensating' | 'needs_review';

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
  | 'charging'
  /** The charge was accepted but not settled (asynchronous payment): waiting for Stripe's webhook. */
  | 'awaiting-payment'
  | 'allocating-stock'
  | 'confirming'
  | 'compensating'
  | 'done';

export interface SagaStatus {
  step: SagaStep;
  orderStatus: OrderStatus;
  paymentIntentId: string | null;
  refundId: string | null;
  reason: string | null;
}
