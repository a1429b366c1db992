// Tracks where the saga stands (step, status, Stripe IDs, outcome) and mirrors it to the status
// query, the search attributes and the Web UI's current details.
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { OrderResult, OrderStatus, PaymentOutcome, SagaStatus, SagaStep } from '../domain/order-result.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../platform/temporal/search-attributes.js';
import { countOrderOutcome } from './saga-metrics.js';

/**
 * The statuses an operator filters runs by (`OrderStatus = "..."`): a hold on the customer's
 * card, an order being undone, and every end. Each upsert is an event and a visibility write, so
 * the steps between them (reserved, paid) show in the status query and the details only; the
 * order's row in Postgres has every status.
 */
const PUBLISHED_STATUSES: ReadonlySet<OrderStatus> = new Set<OrderStatus>(['pending', 'authorized', 'compensating', 'completed', 'declined', 'compensated', 'needs_review']);

/** The saga's position, mirrored to the status query, the search attributes and the UI. */
export class SagaProgress {
  private step: SagaStep = 'validating';
  private status: OrderStatus = 'pending';
  private paymentIntentId: string | null = null;
  private refundId: string | null = null;
  private reason: string | null = null;
  private outcome: PaymentOutcome | null = null;
  /** The OrderStatus search attribute as last written (by the start, or by this run). */
  private published: string | undefined;

  constructor(private readonly orderId: string) {
    const attributes = workflowInfo().typedSearchAttributes;
    this.published = attributes.get(OrderStatusAttribute);
    // Every starter of this project sets both (orderStartOptions); a run started otherwise gets them here.
    if (attributes.get(OrderIdAttribute) !== orderId || this.published === undefined) {
      upsertSearchAttributes([
        { key: OrderIdAttribute, value: orderId },
        { key: OrderStatusAttribute, value: this.status },
      ]);
      this.published = this.status;
    }
  }

  enter(step: SagaStep): void {
    this.step = step;
    setCurrentDetails(`**${step}** · order ${this.orderId} · status ${this.status}`);
  }

  setStatus(status: OrderStatus): void {
    this.status = status;
    if (PUBLISHED_STATUSES.has(status) && this.published !== status) {
      upsertSearchAttributes([{ key: OrderStatusAttribute, value: status }]);
      this.published = status;
    }
    setCurrentDetails(`**${this.step}** · order ${this.orderId} · status ${status}`);
  }

  /** The payment was accepted but not decided: waiting for its webhook. */
  awaitingPayment(pending: { paymentIntentId: string; status: string; nextAction?: Record<string, unknown> | null }): void {
    this.paymentIntentId = pending.paymentIntentId;
    this.reason = `payment ${pending.status}`;
    if (pending.status === 'requires_action') {
      this.outcome = { status: 'requires_action', paymentIntentId: pending.paymentIntentId, nextAction: pending.nextAction ?? null };
    }
    this.enter('awaiting-payment');
  }

  /** The hold is in place: what the checkout waits for. */
  authorized(paymentIntentId: string): void {
    this.reason = null;
    this.paymentIntentId = paymentIntentId;
    this.outcome = { status: 'authorized', paymentIntentId };
    this.setStatus('authorized');
  }

  /** The authorization's outcome when it is not a hold. */
  decided(outcome: Extract<PaymentOutcome, { status: 'declined' | 'out_of_stock' }>): void {
    this.outcome = outcome;
  }

  /** Money moved: the capture. */
  charged(charge: { paymentIntentId: string }): void {
    this.reason = null;
    this.paymentIntentId = charge.paymentIntentId;
    this.setStatus('paid');
  }

  refunded(refund: { refundId: string | null; paymentIntentId: string | null }): void {
    this.refundId = refund.refundId;
    this.paymentIntentId ??= refund.paymentIntentId;
  }

  finish(status: OrderStatus, reason: string | null): void {
    this.reason = reason;
    this.step = 'done';
    // Whoever waits for the outcome gets one, however the order ended.
    this.outcome ??=
      status === 'completed' && this.paymentIntentId !== null
        ? { status: 'authorized', paymentIntentId: this.paymentIntentId }
        : status === 'declined'
          ? { status: 'declined', declineCode: reason ?? 'card_declined' }
          : { status: 'failed', reason: reason ?? status };
    this.setStatus(status);
    countOrderOutcome(status);
  }

  /** The run fails before any outcome was known: the waiting checkout learns why. */
  failedBeforeOutcome(reason: string): void {
    this.outcome ??= { status: 'failed', reason };
  }

  /** The authorization's outcome, once known. */
  get paymentOutcome(): PaymentOutcome | null {
    return this.outcome;
  }

  snapshot(): SagaStatus {
    return {
      step: this.step,
      orderStatus: this.status,
      paymentIntentId: this.paymentIntentId,
      refundId: this.refundId,
      reason: this.reason,
      paymentOutcome: this.outcome,
    };
  }

  result(status: OrderResult['status']): OrderResult {
    return { status, orderId: this.orderId, paymentIntentId: this.paymentIntentId, refundId: this.refundId, reason: this.reason };
  }
}
