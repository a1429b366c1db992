// Inputs and answers of the charge-first activities, frozen with their recorded histories.
import type { OrderInput } from '../../domain/order-input.js';
import type { Keyed } from '../types.js';

/**
 * Inputs and answers of the charge-first activities. Only executions that started before the
 * hold-then-capture change run them (the workflow's `hold-then-capture` patch decides); their
 * recorded histories name these types, so they stay until the last such execution has ended.
 */

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

/**
 * A charge Stripe accepted but has not settled: the PaymentIntent is `processing` (an
 * asynchronous payment method) or `requires_action` (waiting for the customer). Nothing is in
 * the ledger yet; the saga waits for the webhook, then settles it with `settlePayment`.
 */
export interface PendingCharge {
  paymentIntentId: string;
  amount: number;
  currency: string;
  status: 'processing' | 'requires_action';
  /** How long to wait for the webhook before asking Stripe (the worker's configuration). */
  recheckAfterMs: number;
}

/** What the charge and the settlement answer: settled, or still settling. Declines are failures. */
export type ChargeOutcome = ChargeResult | PendingCharge;

export interface SettlePaymentInput extends Keyed {
  orderId: string;
  /** The charge being settled, named by its activity ID: the settlement records under its key. */
  chargeActivityId: string;
  /** What woke the saga: the webhook's event, or the end of its wait. For logs and the UI. */
  trigger: { kind: 'webhook'; eventId: string } | { kind: 'recheck' };
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
