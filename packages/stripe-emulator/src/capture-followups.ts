// What Stripe does on its own once a charge is captured, for the test cards that ask for it: the
// cardholder's bank disputes the charge, or the card network warns of fraud.
import type Stripe from 'stripe';
import { openDispute } from './disputes.js';
import { raiseEarlyFraudWarning } from './early-fraud-warnings.js';
import { findTestCard } from './payment-methods.js';
import type { AccountState } from './store.js';

/**
 * Called wherever a capture completes (an automatic-capture confirmation, a manual capture, an
 * asynchronous payment settling), after that capture's own events, so the dispute or warning
 * always follows the payment it is about.
 */
export function afterCapture(account: AccountState, charge: Stripe.Charge, now: number): void {
  const card = typeof charge.payment_method === 'string' ? findTestCard(charge.payment_method) : undefined;
  if (card?.dispute) openDispute(account, charge, card.dispute, now);
  if (card?.earlyFraudWarning) raiseEarlyFraudWarning(account, charge, now);
}
