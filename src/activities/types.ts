import type { OrderInput } from '../domain/order-input.js';

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

export interface ChargePaymentInput extends Keyed {
  order: OrderInput;
  workflowId: string;
}

export interface ChargeResult {
  paymentIntentId: string;
  amount: number;
  currency: string;
  status: 'succeeded';
}

export interface AllocateStockInput extends Keyed {
  orderId: string;
  sku: string;
  quantity: number;
}

export interface RefundPaymentInput extends Keyed {
  orderId: string;
  workflowId: string;
  /** The charge this refund compensates, named by its activity ID (its key's other half). */
  chargeActivityId: string;
}

export interface RefundResult {
  /** Null when there was nothing to refund: the charge never happened. */
  refundId: string | null;
  paymentIntentId: string | null;
  amount: number;
  currency: string | null;
  /** How the charge's outcome was known: from our records, or by asking Stripe. */
  resolvedBy: 'ledger' | 'stripe-search' | 'nothing-charged';
}

export interface RecordRefundInput extends Keyed {
  orderId: string;
  refund: RefundResult;
}

export interface ReleaseStockInput extends Keyed {
  orderId: string;
  /** The allocation this release compensates, named by its activity ID. */
  allocationActivityId: string;
}

export interface SetOrderStatusInput {
  orderId: string;
  status: 'compensating' | 'declined' | 'compensated' | 'needs_review';
  reason: string | null;
}
