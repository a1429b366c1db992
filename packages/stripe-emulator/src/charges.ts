// The Charge objects confirmations create (failed for a decline, uncaptured for a manual-capture
// hold) and `GET /v1/charges/:id`.
import type Stripe from 'stripe';
import type { Endpoint, RequestContext } from './endpoint.js';
import { resourceMissing } from './errors.js';
import { newId } from './ids.js';
import { rejectUnknownParams } from './params.js';
import type { TestCard } from './payment-methods.js';

/**
 * The Charge a confirmation attempt creates; declined attempts create a failed one, as Stripe does.
 * With `capture_method=manual` a successful attempt authorizes without capturing: the charge is
 * `captured: false` and carries `payment_method_details.card.capture_before`.
 */
export function createCharge(
  ctx: RequestContext,
  paymentIntent: Stripe.PaymentIntent,
  card: TestCard,
): Stripe.Charge {
  const created = ctx.clock.nowSeconds();
  const declined = card.decline !== undefined;
  const authorizeOnly = paymentIntent.capture_method === 'manual' && !declined;
  const captured = !declined && !authorizeOnly;
  const charge: Stripe.Charge = {
    id: newId('ch'),
    object: 'charge',
    amount: paymentIntent.amount,
    amount_captured: captured ? paymentIntent.amount : 0,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: captured ? newId('txn') : null,
    billing_details: { address: null, email: null, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: 'EMULATOR',
    captured,
    created,
    currency: paymentIntent.currency,
    customer: paymentIntent.customer,
    description: paymentIntent.description,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: card.decline ? 'card_declined' : null,
    failure_message: card.decline ? card.decline.message : null,
    fraud_details: {},
    livemode: false,
    // Stripe copies the PaymentIntent's metadata onto the charge it creates.
    metadata: { ...paymentIntent.metadata },
    on_behalf_of: null,
    outcome: card.decline
      ? {
          advice_code: null,
          network_advice_code: null,
          network_decline_code: null,
          network_status: 'declined_by_network',
          reason: card.decline.declineCode,
          risk_level: 'normal',
          seller_message: 'The bank did not return any further details with this decline.',
          type: 'issuer_declined',
        }
      : {
          advice_code: null,
          network_advice_code: null,
          network_decline_code: null,
          network_status: 'approved_by_network',
          reason: null,
          risk_level: 'normal',
          seller_message: 'Payment complete.',
          type: 'authorized',
        },
    paid: !declined,
    payment_intent: paymentIntent.id,
    payment_method: card.id,
    payment_method_details: {
      card: {
        amount_authorized: declined ? null : paymentIntent.amount,
        authorization_code: null,
        ...(authorizeOnly && { capture_before: created + Math.floor(ctx.authorizationWindowMs / 1000) }),
        brand: card.brand,
        checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'pass' },
        country: 'US',
        electronic_commerce_indicator: null,
        exp_month: 12,
        exp_year: new Date(created * 1000).getUTCFullYear() + 5,
        funding: 'credit',
        installments: null,
        last4: card.last4,
        mandate: null,
        network: card.brand,
        network_token: { used: false },
        network_transaction_id: null,
        regulated_status: 'unregulated',
        three_d_secure: null,
        transaction_link_id: null,
        wallet: null,
      },
      type: 'card',
    },
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: false,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: declined ? 'failed' : 'succeeded',
    transfer_data: null,
    transfer_group: null,
  };
  ctx.account.charges.set(charge.id, charge);
  return charge;
}

/** Sets when a charge's authorization lapses (a hold placed after the confirmation, by a settlement). */
export function setCaptureBefore(charge: Stripe.Charge, captureBefore: number): void {
  const card = charge.payment_method_details?.card;
  if (card) card.capture_before = captureBefore;
}

export const retrieveCharge: Endpoint = {
  method: 'GET',
  path: '/v1/charges/:id',
  prepare(ctx) {
    rejectUnknownParams(ctx.params, ['expand']);
    const id = ctx.pathParams.id ?? '';
    const charge = ctx.account.charges.get(id);
    if (!charge) throw resourceMissing('charge', id, 'id', 404);
    return () => charge;
  },
};
