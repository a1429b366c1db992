// The test payment methods the emulator accepts (Stripe's documented test cards, among them the
// dispute and early-fraud-warning ones, and a few emulator-only asynchronous ones), what each
// does, and the PaymentMethod object it shows.
import type Stripe from 'stripe';

export interface Decline {
  declineCode: 'generic_decline' | 'insufficient_funds' | 'lost_card' | 'stolen_card';
  message: string;
}

export interface TestCard {
  id: string;
  brand: 'visa' | 'mastercard';
  last4: string;
  /** Absent: the card is charged successfully. */
  decline?: Decline;
  /**
   * The payment does not complete during confirmation: the PaymentIntent stays `processing`
   * and settles later (after the emulator's async settle delay) with this outcome, announced
   * by webhook, as bank debits (ACH, SEPA) do on Stripe. Refunds of it settle later too.
   */
  settlesAsync?: { outcome: 'succeeded' } | { outcome: 'failed'; decline: Decline };
  /** Confirmation stops at `requires_action` (3-D Secure) and waits for a customer that never comes. */
  requiresAuthentication?: true;
  /**
   * Once the charge is captured, the cardholder's bank disputes it (disputes.ts): a chargeback,
   * or an inquiry (a question before any chargeback, which withdraws no funds).
   */
  dispute?: DisputeTrigger;
  /** Once the charge is captured, the card network reports it as fraud: a Radar early fraud warning. */
  earlyFraudWarning?: true;
}

export interface DisputeTrigger {
  reason: 'fraudulent' | 'product_not_received';
  inquiry: boolean;
}

const DECLINES: Readonly<Record<string, Decline>> = {
  '': { declineCode: 'generic_decline', message: 'Your card was declined.' },
  InsufficientFunds: { declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  LostCard: { declineCode: 'lost_card', message: 'Your card was declined.' },
  StolenCard: { declineCode: 'stolen_card', message: 'Your card was declined.' },
};

/** Last four digits of Stripe's documented test card for each decline. */
const DECLINE_LAST4: Readonly<Record<string, string>> = {
  '': '0002',
  InsufficientFunds: '9995',
  LostCard: '9987',
  StolenCard: '9979',
};

function buildCatalogue(): ReadonlyMap<string, TestCard> {
  const cards: TestCard[] = [
    { id: 'pm_card_visa', brand: 'visa', last4: '4242' },
    { id: 'pm_card_mastercard', brand: 'mastercard', last4: '4444' },
    // Stripe's documented cards that need 3-D Secure on every payment.
    { id: 'pm_card_authenticationRequired', brand: 'visa', last4: '3155', requiresAuthentication: true },
    { id: 'pm_card_threeDSecure2Required', brand: 'visa', last4: '3220', requiresAuthentication: true },
    // Stripe's documented cards whose captured charges are disputed, or draw an early fraud warning.
    { id: 'pm_card_createDispute', brand: 'visa', last4: '0259', dispute: { reason: 'fraudulent', inquiry: false } },
    {
      id: 'pm_card_createDisputeProductNotReceived',
      brand: 'visa',
      last4: '2685',
      dispute: { reason: 'product_not_received', inquiry: false },
    },
    { id: 'pm_card_createDisputeInquiry', brand: 'visa', last4: '1976', dispute: { reason: 'fraudulent', inquiry: true } },
    { id: 'pm_card_createEarlyFraudWarning', brand: 'visa', last4: '5423', earlyFraudWarning: true },
    // Emulator-only: Stripe's test cards all settle during confirmation; its asynchronous
    // methods are bank debits. These let a card-shaped order take the asynchronous path.
    { id: 'pm_card_async_success', brand: 'visa', last4: '1111', settlesAsync: { outcome: 'succeeded' } },
    {
      id: 'pm_card_async_fail',
      brand: 'visa',
      last4: '0341',
      settlesAsync: { outcome: 'failed', decline: { declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' } },
    },
  ];
  for (const [suffix, decline] of Object.entries(DECLINES)) {
    const last4 = DECLINE_LAST4[suffix] ?? '0002';
    // Stripe documents both spellings of each declining test payment method.
    for (const prefix of ['pm_card_visa_chargeDeclined', 'pm_card_chargeDeclined']) {
      cards.push({ id: `${prefix}${suffix}`, brand: 'visa', last4, decline });
    }
  }
  return new Map(cards.map((card) => [card.id, card]));
}

const CATALOGUE = buildCatalogue();

export function findTestCard(id: string): TestCard | undefined {
  return CATALOGUE.get(id);
}

/** The PaymentMethod object Stripe embeds in decline errors and `last_payment_error`. */
export function paymentMethodObject(card: TestCard, created: number): Stripe.PaymentMethod {
  return {
    id: card.id,
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: { address: null, email: null, name: null, phone: null, tax_id: null },
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
      country: 'US',
      display_brand: card.brand,
      exp_month: 12,
      exp_year: new Date(created * 1000).getUTCFullYear() + 5,
      funding: 'credit',
      generated_from: null,
      last4: card.last4,
      networks: { available: [card.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created,
    customer: null,
    customer_account: null,
    livemode: false,
    metadata: {},
    type: 'card',
  };
}
