// Refunds through the official SDK: the default and partial amounts, the limits and errors Stripe gives, and listing.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { chargeParams, rejection, useEmulator } from './helpers.js';

const test = useEmulator();

async function charged(orderId: string, amount = 5_000): Promise<Stripe.PaymentIntent> {
  return test.stripe.paymentIntents.create(chargeParams(orderId, { amount }));
}

async function latestCharge(intent: Stripe.PaymentIntent): Promise<Stripe.Charge> {
  const fresh = await test.stripe.paymentIntents.retrieve(intent.id, { expand: ['latest_charge'] });
  return fresh.latest_charge as Stripe.Charge;
}

describe('refunds', () => {
  it('refunds what remains by default and marks the charge refunded', async () => {
    const intent = await charged('order-r1');
    const refund = await test.stripe.refunds.create({
      payment_intent: intent.id,
      reason: 'requested_by_customer',
      metadata: { order_id: 'order-r1' },
    });
    expect(refund).toMatchObject({
      object: 'refund',
      amount: 5_000,
      currency: 'usd',
      status: 'succeeded',
      payment_intent: intent.id,
      charge: intent.latest_charge,
      reason: 'requested_by_customer',
      metadata: { order_id: 'order-r1' },
    });
    expect(refund.id).toMatch(/^re_/);
    const charge = await latestCharge(intent);
    expect(charge).toMatchObject({ amount_refunded: 5_000, refunded: true });
    expect((await test.stripe.charges.retrieve(charge.id)).amount_refunded).toBe(5_000);
    expect((await test.stripe.refunds.retrieve(refund.id)).id).toBe(refund.id);
  });

  it('tracks partial refunds on the charge', async () => {
    const intent = await charged('order-r2');
    await test.stripe.refunds.create({ payment_intent: intent.id, amount: 1_000 });
    expect(await latestCharge(intent)).toMatchObject({ amount_refunded: 1_000, refunded: false });
    const rest = await test.stripe.refunds.create({ payment_intent: intent.id });
    expect(rest.amount).toBe(4_000);
    expect(await latestCharge(intent)).toMatchObject({ amount_refunded: 5_000, refunded: true });
  });

  it('refuses more than remains, in Stripe\'s words', async () => {
    const intent = await charged('order-r3', 1_000);
    await test.stripe.refunds.create({ payment_intent: intent.id, amount: 400 });
    const error = await rejection(test.stripe.refunds.create({ payment_intent: intent.id, amount: 1_500 }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error', param: 'amount' });
    expect(error.message).toBe('Refund amount ($15.00) is greater than unrefunded amount on charge ($6.00)');
    expect((await latestCharge(intent)).amount_refunded).toBe(400);
  });

  it('answers charge_already_refunded once nothing remains', async () => {
    const intent = await charged('order-r4');
    await test.stripe.refunds.create({ payment_intent: intent.id });
    const error = await rejection(test.stripe.refunds.create({ payment_intent: intent.id }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ code: 'charge_already_refunded' });
    expect((await test.stripe.refunds.list({ payment_intent: intent.id })).data).toHaveLength(1);
  });

  it('refuses a PaymentIntent that never succeeded', async () => {
    const declined = await rejection(
      test.stripe.paymentIntents.create(chargeParams('order-r5', { payment_method: 'pm_card_chargeDeclined' })),
    );
    const intentId = (declined as Stripe.errors.StripeCardError).payment_intent?.id ?? '';
    const error = await rejection(test.stripe.refunds.create({ payment_intent: intentId }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ param: 'payment_intent' });
  });

  it('validates its parameters', async () => {
    const intent = await charged('order-r6');
    const missing = await rejection(test.stripe.refunds.create({}));
    expect(missing).toMatchObject({ statusCode: 400, code: 'parameter_missing' });
    const unknown = await rejection(test.stripe.refunds.create({ payment_intent: 'pi_nope' }));
    expect(unknown).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'payment_intent' });
    const badReason = await rejection(
      test.stripe.refunds.create({ payment_intent: intent.id, reason: 'bored' as Stripe.RefundCreateParams.Reason }),
    );
    expect(badReason).toMatchObject({ statusCode: 400, param: 'reason' });
    const zero = await rejection(test.stripe.refunds.create({ payment_intent: intent.id, amount: 0 }));
    expect(zero).toMatchObject({ statusCode: 400, param: 'amount' });
    const notFound = await rejection(test.stripe.refunds.retrieve('re_nope'));
    expect(notFound).toMatchObject({ statusCode: 404, code: 'resource_missing' });
  });

  it('lists by payment_intent with limit and starting_after', async () => {
    const intent = await charged('order-r7');
    const other = await charged('order-r7-other');
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await test.stripe.refunds.create({ payment_intent: intent.id, amount: 100 })).id);
    await test.stripe.refunds.create({ payment_intent: other.id, amount: 100 });
    const newestFirst = [...ids].reverse();

    const first = await test.stripe.refunds.list({ payment_intent: intent.id, limit: 2 });
    expect(first.data.map((refund) => refund.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.has_more).toBe(true);
    const second = await test.stripe.refunds.list({ payment_intent: intent.id, limit: 2, starting_after: first.data[1]?.id });
    expect(second.data.map((refund) => refund.id)).toEqual(newestFirst.slice(2));
    expect(second.has_more).toBe(false);
    expect((await test.stripe.refunds.list({ limit: 100 })).data).toHaveLength(4);
  });
});
