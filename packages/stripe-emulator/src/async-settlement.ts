// Payments and refunds that settle after their request (the asynchronous test cards): the timers
// that move each to its final state and record the events Stripe would send.
import type Stripe from 'stripe';
import { afterCapture } from './capture-followups.js';
import type { Clock } from './clock.js';
import { DEFAULT_AUTHORIZATION_WINDOW_MS, placeHold } from './holds.js';
import { findTestCard, paymentMethodObject, type Decline } from './payment-methods.js';
import { setCaptureBefore } from './charges.js';
import type { AccountState } from './store.js';

export type SettlementOutcome = 'succeeded' | 'failed';

/** Events Stripe raises on its own carry no request. */
const NO_REQUEST = { requestId: null, idempotencyKey: null } as const;

/** Default wait before an asynchronous payment or refund settles: long enough to be seen pending. */
export const DEFAULT_ASYNC_SETTLE_MS = 2_000;

const DEFAULT_FAILURE: Decline = { declineCode: 'generic_decline', message: 'Your card was declined.' };

/**
 * Payments and refunds that complete after the request that started them: a timer per object
 * moves it to its final state and records the events Stripe would send. Settling is a no-op for
 * an object that already left its pending state (a cancelled PaymentIntent never settles).
 */
export class AsyncSettlement {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #delayMs: number;

  constructor(
    private readonly clock: Clock,
    delayMs: number = DEFAULT_ASYNC_SETTLE_MS,
    /** The manual-capture window a hold placed by a settlement gets (the emulator's setting). */
    private readonly authorizationWindowMs: () => number = () => DEFAULT_AUTHORIZATION_WINDOW_MS,
  ) {
    this.#delayMs = delayMs;
  }

  get delayMs(): number {
    return this.#delayMs;
  }

  configure(delayMs: number): void {
    if (!Number.isSafeInteger(delayMs) || delayMs < 0) throw new RangeError(`async settle delay must be a whole number of ms >= 0, got ${delayMs}`);
    this.#delayMs = delayMs;
  }

  schedulePaymentIntent(account: AccountState, paymentIntentId: string): void {
    this.#schedule(paymentIntentId, () => {
      settlePaymentIntent(account, this.clock, this.authorizationWindowMs(), paymentIntentId);
    });
  }

  scheduleRefund(account: AccountState, refundId: string): void {
    this.#schedule(refundId, () => {
      settleRefund(account, this.clock, refundId);
    });
  }

  /** Settles a processing PaymentIntent now (with the card's outcome unless one is given). */
  settlePaymentIntentNow(account: AccountState, paymentIntentId: string, outcome?: SettlementOutcome): boolean {
    this.#cancel(paymentIntentId);
    return settlePaymentIntent(account, this.clock, this.authorizationWindowMs(), paymentIntentId, outcome);
  }

  reset(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #schedule(id: string, settle: () => void): void {
    this.#cancel(id);
    const timer = setTimeout(() => {
      this.#timers.delete(id);
      settle();
    }, this.#delayMs);
    this.#timers.set(id, timer);
  }

  #cancel(id: string): void {
    const timer = this.#timers.get(id);
    if (timer) clearTimeout(timer);
    this.#timers.delete(id);
  }
}

function settlePaymentIntent(
  account: AccountState,
  clock: Clock,
  authorizationWindowMs: number,
  paymentIntentId: string,
  outcome?: SettlementOutcome,
): boolean {
  const paymentIntent = account.paymentIntents.get(paymentIntentId);
  if (paymentIntent?.status !== 'processing') return false;
  const card = typeof paymentIntent.payment_method === 'string' ? findTestCard(paymentIntent.payment_method) : undefined;
  const charge = typeof paymentIntent.latest_charge === 'string' ? account.charges.get(paymentIntent.latest_charge) : undefined;
  if (!card || !charge) return false;
  const settled = outcome ?? card.settlesAsync?.outcome ?? 'succeeded';
  const now = clock.nowSeconds();

  if (settled === 'succeeded' && paymentIntent.capture_method === 'manual') {
    // Authorized, not captured: the hold waits for its capture.
    setCaptureBefore(charge, now + Math.floor(authorizationWindowMs / 1000));
    placeHold(account, paymentIntent, charge);
    paymentIntent.processing = null;
    account.events.record('charge.succeeded', charge, now, NO_REQUEST);
    account.events.record('payment_intent.amount_capturable_updated', paymentIntent, now, NO_REQUEST);
    return true;
  }
  if (settled === 'succeeded') {
    charge.status = 'succeeded';
    charge.paid = true;
    charge.captured = true;
    charge.amount_captured = charge.amount;
    paymentIntent.status = 'succeeded';
    paymentIntent.amount_received = paymentIntent.amount;
    paymentIntent.processing = null;
    account.events.record('charge.succeeded', charge, now, NO_REQUEST);
    account.events.record('payment_intent.succeeded', paymentIntent, now, NO_REQUEST);
    afterCapture(account, charge, now);
    return true;
  }

  const decline = card.settlesAsync?.outcome === 'failed' ? card.settlesAsync.decline : DEFAULT_FAILURE;
  charge.status = 'failed';
  charge.paid = false;
  charge.captured = false;
  charge.amount_captured = 0;
  charge.balance_transaction = null;
  charge.failure_code = 'card_declined';
  charge.failure_message = decline.message;
  charge.outcome = {
    advice_code: null,
    network_advice_code: null,
    network_decline_code: null,
    network_status: 'declined_by_network',
    reason: decline.declineCode,
    risk_level: 'normal',
    seller_message: 'The bank did not return any further details with this decline.',
    type: 'issuer_declined',
  };
  // As after a synchronous decline: the PaymentIntent wants another payment method.
  paymentIntent.status = 'requires_payment_method';
  paymentIntent.payment_method = null;
  paymentIntent.processing = null;
  paymentIntent.last_payment_error = {
    charge: charge.id,
    code: 'card_declined',
    decline_code: decline.declineCode,
    doc_url: 'https://stripe.com/docs/error-codes/card-declined',
    message: decline.message,
    payment_method: paymentMethodObject(card, now),
    type: 'card_error',
  } satisfies Stripe.PaymentIntent.LastPaymentError;
  account.events.record('charge.failed', charge, now, NO_REQUEST);
  account.events.record('payment_intent.payment_failed', paymentIntent, now, NO_REQUEST);
  return true;
}

function settleRefund(account: AccountState, clock: Clock, refundId: string): void {
  const refund = account.refunds.get(refundId);
  if (refund?.status !== 'pending') return;
  refund.status = 'succeeded';
  account.events.record('refund.updated', refund, clock.nowSeconds(), NO_REQUEST, { status: 'pending' });
}
