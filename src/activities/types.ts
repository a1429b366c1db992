// The inputs and answers the workflow and the activities exchange: the activities' public types.
import type { OrderInput } from '../domain/order-input.js';
import type { OrderStatus } from '../domain/order-result.js';
import type { Hold, SettlingAuthorization } from '../money/payments/payment-protocol.js';

export type { Capture, Hold, SettlingAuthorization } from '../money/payments/payment-protocol.js';

/**
 * Every side-effecting activity receives the workflow's original execution run ID; with the
 * activity's own ID it makes the activity's idempotency key.
 */
export interface Keyed {
  originalRunId: string;
}

export interface RecordOrderInput {
  order: OrderInput;
  workflowId: string;
}

export interface ReserveStockInput extends Keyed {
  orderId: string;
  sku: string;
  quantity: number;
}

/**
 * The order's record and its reservation, in one step. It may run as a local activity, whose own
 * ID is a sequence number: the reservation's key is made from the step ID named here.
 */
export interface RecordAndReserveInput extends Keyed {
  order: OrderInput;
  workflowId: string;
  /** The reservation's stable step ID: with the original run ID, its key. */
  stepId: string;
}

export interface AuthorizePaymentInput extends Keyed {
  order: OrderInput;
  workflowId: string;
}

/** A hold ready to capture, and until when the saga may try. */
export interface HeldPayment extends Hold {
  /**
   * How long, from this answer, the saga may try to capture: until `capture_before` less the
   * worker's capture margin. Past it the saga stops trying and voids the hold instead
   * (AuthorizationExpired). Measured by the activity, so the workflow needs no clock of its own.
   */
  captureWithinMs: number;
}

/** An authorization still settling, and how long to wait for its webhook before asking Stripe. */
export interface PendingAuthorization extends SettlingAuthorization {
  recheckAfterMs: number;
}

/** What the authorization and its settlement answer: held, or still settling. Declines are failures. */
export type AuthorizationOutcome = HeldPayment | PendingAuthorization;

export interface SettleAuthorizationInput extends Keyed {
  orderId: string;
  /** The authorization being settled, named by its activity ID: the settlement records under its key. */
  authorizationActivityId: string;
  /** What woke the saga: the webhook's event, or the end of its wait. For logs and the UI. */
  trigger: { kind: 'webhook'; eventId: string } | { kind: 'recheck' };
}

export interface CapturePaymentInput extends Keyed {
  orderId: string;
  workflowId: string;
  hold: Hold;
}

export interface VoidAuthorizationInput extends Keyed {
  orderId: string;
  workflowId: string;
  /** The authorization this void compensates, named by its activity ID (its key's other half). */
  authorizationActivityId: string;
  /** The capture of the same hold: a hold it captured is not voided (the refund undoes it). */
  captureActivityId: string;
  /** Why the hold is released; Stripe's `cancellation_reason` follows from it. */
  reason: 'cancelled' | 'failed' | 'expired';
}

export interface VoidResult {
  /** The PaymentIntent released, or null when no authorization exists. */
  paymentIntentId: string | null;
  /**
   * `voided`: this compensation released the hold; `lapsed`: Stripe had already let it expire;
   * `nothing-held`: no authorization was made (declined, or never reached Stripe: its key is
   * fenced); `captured`: the PaymentIntent was captured, so there is nothing to void (its refund
   * is the other compensation's).
   */
  outcome: 'voided' | 'lapsed' | 'nothing-held' | 'captured';
  /** How the authorization was known: from our records, or by asking Stripe. */
  resolvedBy: 'records' | 'stripe';
}

export interface RefundCaptureInput extends Keyed {
  orderId: string;
  workflowId: string;
  authorizationActivityId: string;
  /** The capture this refund compensates, named by its activity ID. */
  captureActivityId: string;
}

export interface RefundCaptureResult {
  /** Null when nothing was captured, so nothing was refunded. */
  refundId: string | null;
  paymentIntentId: string | null;
  amount: number;
  currency: string | null;
  /** How the capture was known: from our records, by asking Stripe, or nothing was captured. */
  resolvedBy: 'records' | 'stripe' | 'nothing-captured';
}

export interface ReleaseStockInput extends Keyed {
  orderId: string;
  /** The reservation this release compensates. */
  allocationActivityId: string;
  /**
   * The release's own stable step ID, for its key. Named here because the release runs as a local
   * activity, whose own ID is a sequence number.
   */
  stepId: string;
}

/** What a status change did: whether the order moved, and its status after (null: no such order). */
export interface OrderStatusChangeResult {
  moved: boolean;
  status: OrderStatus | null;
}

export interface SetOrderStatusInput {
  orderId: string;
  status: 'compensating' | 'declined' | 'compensated' | 'needs_review';
  reason: string | null;
}
