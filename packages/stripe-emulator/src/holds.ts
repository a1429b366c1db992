// Manual-capture holds on a PaymentIntent: placing one, releasing it, and letting it lapse at its
// charge's `capture_before` on the emulator's clock.
import type Stripe from 'stripe';
import type { AccountState } from './store.js';

/** Stripe's window for capturing an online card authorization: 7 days. */
export const DEFAULT_AUTHORIZATION_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** Events Stripe raises on its own carry no request. */
const NO_REQUEST = { requestId: null, idempotencyKey: null } as const;

/**
 * Authorizations waiting to be captured (`capture_method=manual`): a PaymentIntent in
 * `requires_capture` holds `amount_capturable` on the card until it is captured, cancelled, or
 * lapses at its charge's `payment_method_details.card.capture_before`.
 */
export function placeHold(account: AccountState, paymentIntent: Stripe.PaymentIntent, charge: Stripe.Charge): void {
  paymentIntent.status = 'requires_capture';
  paymentIntent.amount_capturable = paymentIntent.amount;
  charge.status = 'succeeded';
  charge.paid = true;
  charge.captured = false;
  charge.amount_captured = 0;
  account.heldPaymentIntents.add(paymentIntent.id);
}

/**
 * Releases what a hold still holds without capturing it: the PaymentIntent is cancelled, and, as
 * Stripe does, the uncaptured amount shows as refunded on its charge (Stripe's answer to "cancel
 * a PaymentIntent in requires_capture": the remaining amount_capturable is refunded).
 */
export function releaseHold(
  account: AccountState,
  paymentIntent: Stripe.PaymentIntent,
  cancellation: { reason: Stripe.PaymentIntent.CancellationReason | null; at: number },
): Stripe.Charge | undefined {
  const charge = chargeOf(account, paymentIntent);
  if (charge && !charge.captured) {
    charge.amount_refunded = charge.amount;
    charge.refunded = true;
  }
  paymentIntent.amount_capturable = 0;
  paymentIntent.status = 'canceled';
  paymentIntent.canceled_at = cancellation.at;
  paymentIntent.cancellation_reason = cancellation.reason;
  paymentIntent.next_action = null;
  paymentIntent.processing = null;
  account.heldPaymentIntents.delete(paymentIntent.id);
  return charge;
}

/**
 * Lets every hold whose `capture_before` has passed on the emulator's clock lapse, as Stripe does
 * on its own: the PaymentIntent is cancelled with `cancellation_reason: automatic`, and
 * `charge.expired` and `payment_intent.canceled` are sent. Called before each request and after
 * the clock moves, so a lapse is seen however time passed.
 */
export function lapseExpiredHolds(account: AccountState, nowSeconds: number): number {
  let lapsed = 0;
  for (const id of [...account.heldPaymentIntents]) {
    const paymentIntent = account.paymentIntents.get(id);
    if (paymentIntent?.status !== 'requires_capture') {
      account.heldPaymentIntents.delete(id);
      continue;
    }
    const captureBefore = captureBeforeOf(account, paymentIntent);
    if (captureBefore === null || nowSeconds < captureBefore) continue;
    const charge = releaseHold(account, paymentIntent, { reason: 'automatic', at: captureBefore });
    if (charge) account.events.record('charge.expired', charge, captureBefore, NO_REQUEST);
    account.events.record('payment_intent.canceled', paymentIntent, captureBefore, NO_REQUEST);
    lapsed += 1;
  }
  return lapsed;
}

export function chargeOf(account: AccountState, paymentIntent: Stripe.PaymentIntent): Stripe.Charge | undefined {
  return typeof paymentIntent.latest_charge === 'string' ? account.charges.get(paymentIntent.latest_charge) : undefined;
}

export function captureBeforeOf(account: AccountState, paymentIntent: Stripe.PaymentIntent): number | null {
  return chargeOf(account, paymentIntent)?.payment_method_details?.card?.capture_before ?? null;
}
