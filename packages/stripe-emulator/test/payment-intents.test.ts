// PaymentIntents through the official SDK: create and confirm, retrieve, list and search, cancel, declines, validation.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { chargeParams, raw, rejection, useEmulator } from './helpers.js';

const test = useEmulator();

describe('creating and confirming a PaymentIntent', () => {
  it('succeeds with a latest charge that carries the amount and metadata', async () => {
    const intent = await test.stripe.paymentIntents.create(
      chargeParams('order-1', { description: 'Order order-1', customer: 'cus_123', amount: 4_200, currency: 'EUR' }),
    );
    expect(intent).toMatchObject({
      object: 'payment_intent',
      status: 'succeeded',
      amount: 4_200,
      amount_received: 4_200,
      currency: 'eur',
      customer: 'cus_123',
      description: 'Order order-1',
      payment_method: 'pm_card_visa',
      capture_method: 'automatic',
      metadata: { order_id: 'order-1' },
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      livemode: false,
    });
    expect(intent.id).toMatch(/^pi_/);
    expect(intent.latest_charge).toMatch(/^ch_/);

    const charge = await test.stripe.charges.retrieve(intent.latest_charge as string);
    expect(charge).toMatchObject({
      object: 'charge',
      status: 'succeeded',
      paid: true,
      captured: true,
      amount: 4_200,
      amount_refunded: 0,
      refunded: false,
      payment_intent: intent.id,
      metadata: { order_id: 'order-1' },
    });
  });

  it('succeeds with pm_card_mastercard too', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-mc', { payment_method: 'pm_card_mastercard' }));
    expect(intent.status).toBe('succeeded');
    const charge = await test.stripe.charges.retrieve(intent.latest_charge as string);
    expect(charge.payment_method_details?.card?.brand).toBe('mastercard');
  });

  it('expands latest_charge on request', async () => {
    const intent = await test.stripe.paymentIntents.create({ ...chargeParams('order-x'), expand: ['latest_charge'] });
    expect(intent.latest_charge).toMatchObject({ object: 'charge', amount: 2_500 });
  });

  it('without confirm waits for confirmation, and confirms later', async () => {
    const created = await test.stripe.paymentIntents.create(chargeParams('order-2', { confirm: false }));
    expect(created).toMatchObject({ status: 'requires_confirmation', latest_charge: null });
    const withoutMethod = await test.stripe.paymentIntents.create(chargeParams('order-2b', { confirm: false, payment_method: undefined }));
    expect(withoutMethod.status).toBe('requires_payment_method');
    const confirmed = await test.stripe.paymentIntents.confirm(created.id);
    expect(confirmed.status).toBe('succeeded');
  });

  it('retrieves by id and answers 404 resource_missing for an unknown one', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-3'));
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).id).toBe(intent.id);
    const error = await rejection(test.stripe.paymentIntents.retrieve('pi_unknown'));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'intent' });
  });
});

describe('listing and searching', () => {
  it('lists newest first and pages with limit and starting_after', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await test.stripe.paymentIntents.create(chargeParams(`order-list-${i}`))).id);
    const newestFirst = [...ids].reverse();

    const first = await test.stripe.paymentIntents.list({ limit: 2 });
    expect(first.data.map((pi) => pi.id)).toEqual(newestFirst.slice(0, 2));
    expect(first.has_more).toBe(true);
    const second = await test.stripe.paymentIntents.list({ limit: 2, starting_after: first.data[1]?.id });
    expect(second.data.map((pi) => pi.id)).toEqual(newestFirst.slice(2, 4));
    const all = await test.stripe.paymentIntents.list({ limit: 2 }).autoPagingToArray({ limit: 100 });
    expect(all.map((pi) => pi.id)).toEqual(newestFirst);
  });

  it("finds a PaymentIntent by metadata['order_id'], as the saga reconciles", async () => {
    const wanted = await test.stripe.paymentIntents.create(chargeParams('order-search'));
    await test.stripe.paymentIntents.create(chargeParams('order-other'));
    const found = await test.stripe.paymentIntents.search({ query: "metadata['order_id']:'order-search'" });
    expect(found.object).toBe('search_result');
    expect(found.data.map((pi) => pi.id)).toEqual([wanted.id]);
    const none = await test.stripe.paymentIntents.search({ query: "metadata['order_id']:'nobody'" });
    expect(none.data).toEqual([]);
    const combined = await test.stripe.paymentIntents.search({
      query: "metadata['order_id']:'order-search' AND status:'succeeded'",
    });
    expect(combined.data).toHaveLength(1);
  });

  it('pages search results with next_page', async () => {
    for (let i = 0; i < 3; i += 1) await test.stripe.paymentIntents.create(chargeParams('order-many'));
    const all = await test.stripe.paymentIntents
      .search({ query: "metadata['order_id']:'order-many'", limit: 2 })
      .autoPagingToArray({ limit: 10 });
    expect(new Set(all.map((pi) => pi.id)).size).toBe(3);
  });

  it('rejects a query it cannot parse', async () => {
    const error = await rejection(test.stripe.paymentIntents.search({ query: 'order = 1' }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ param: 'query' });
  });
});

describe('cancelling', () => {
  it('cancels an unconfirmed PaymentIntent', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-cancel', { confirm: false }));
    const cancelled = await test.stripe.paymentIntents.cancel(intent.id, { cancellation_reason: 'abandoned' });
    expect(cancelled).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned' });
    expect(cancelled.canceled_at).toEqual(expect.any(Number));
  });

  it('refuses to cancel a succeeded PaymentIntent', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-cancel-2'));
    const error = await rejection(test.stripe.paymentIntents.cancel(intent.id));
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ code: 'payment_intent_unexpected_state' });
    expect(error.message).toContain('status of succeeded');
  });
});

describe('declines', () => {
  const cases = [
    ['pm_card_visa_chargeDeclined', 'generic_decline', 'Your card was declined.'],
    ['pm_card_chargeDeclined', 'generic_decline', 'Your card was declined.'],
    ['pm_card_visa_chargeDeclinedInsufficientFunds', 'insufficient_funds', 'Your card has insufficient funds.'],
    ['pm_card_chargeDeclinedInsufficientFunds', 'insufficient_funds', 'Your card has insufficient funds.'],
    ['pm_card_visa_chargeDeclinedLostCard', 'lost_card', 'Your card was declined.'],
    ['pm_card_chargeDeclinedLostCard', 'lost_card', 'Your card was declined.'],
    ['pm_card_visa_chargeDeclinedStolenCard', 'stolen_card', 'Your card was declined.'],
    ['pm_card_chargeDeclinedStolenCard', 'stolen_card', 'Your card was declined.'],
  ] as const;

  it.each(cases)('%s answers 402 card_declined / %s', async (paymentMethod, declineCode, message) => {
    const error = await rejection(test.stripe.paymentIntents.create(chargeParams(`order-${paymentMethod}`, { payment_method: paymentMethod })));
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(error).toMatchObject({
      statusCode: 402,
      type: 'StripeCardError',
      rawType: 'card_error',
      code: 'card_declined',
      decline_code: declineCode,
      message,
    });
    const cardError = error as Stripe.errors.StripeCardError;
    const intent = cardError.payment_intent;
    expect(intent).toMatchObject({ status: 'requires_payment_method', payment_method: null });
    expect(intent?.last_payment_error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: declineCode });
    expect(cardError.charge).toMatch(/^ch_/);

    // The PaymentIntent exists after the decline, just as the error described it.
    const stored = await test.stripe.paymentIntents.retrieve(intent?.id ?? '');
    expect(stored.status).toBe('requires_payment_method');
    expect(stored.last_payment_error?.decline_code).toBe(declineCode);
    const failedCharge = await test.stripe.charges.retrieve(cardError.charge ?? '');
    expect(failedCharge).toMatchObject({ status: 'failed', paid: false, failure_code: 'card_declined' });
  });
});

describe('validation', () => {
  async function createError(params: Record<string, unknown>) {
    return rejection(test.stripe.paymentIntents.create(params as unknown as Stripe.PaymentIntentCreateParams));
  }
  const base = { currency: 'usd', amount: 1_000, payment_method: 'pm_card_visa' } as const;

  it.each([
    ['a missing amount', { currency: 'usd' }, 'amount', 'parameter_missing'],
    ['an amount that is not an integer', { ...base, amount: 'ten' }, 'amount', 'parameter_invalid_integer'],
    ['a negative amount', { ...base, amount: -5 }, 'amount', 'parameter_invalid_integer'],
    ['an amount below the currency minimum', { ...base, amount: 10 }, 'amount', 'amount_too_small'],
    ['an amount over 99999999', { ...base, amount: 100_000_000 }, 'amount', 'amount_too_large'],
    ['a missing currency', { amount: 1_000 }, 'currency', 'parameter_missing'],
    ['an unknown payment method', { ...base, payment_method: 'pm_card_nope' }, 'payment_method', 'resource_missing'],
    ['payment_method_types', { ...base, payment_method_types: ['card'] }, 'payment_method_types', 'payment_method_types_no_longer_supported'],
    ['an unknown parameter', { ...base, colour: 'red' }, 'colour', 'parameter_unknown'],
  ])('rejects %s with 400 %s', async (_label, params, param, code) => {
    const error = await createError(params);
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ statusCode: 400, rawType: 'invalid_request_error', param, code });
  });

  it("names the limit in Stripe's words", async () => {
    const error = await createError({ ...base, amount: 100_000_000 });
    expect(error.message).toBe('Amount must be no more than $999,999.99');
    const unknown = await createError({ ...base, payment_method: 'pm_card_nope' });
    expect(unknown.message).toBe("No such PaymentMethod: 'pm_card_nope'");
  });

  it('rejects an unsupported currency', async () => {
    const error = await createError({ ...base, currency: 'zzz' });
    expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(error).toMatchObject({ param: 'currency' });
    expect(error.message).toMatch(/^Invalid currency: zzz\. Stripe currently supports these currencies: usd, /);
  });

  it('rejects a confirm that may redirect and has no return_url', async () => {
    // automatic_payment_methods is enabled by default since 2023-08-16, redirects allowed.
    for (const params of [
      { ...base, confirm: true },
      { ...base, confirm: true, automatic_payment_methods: { enabled: true } },
      { ...base, confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'always' } },
    ]) {
      const error = await createError(params);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error.message).toContain('you must provide a `return_url`');
    }
    const withReturnUrl = await test.stripe.paymentIntents.create({ ...base, confirm: true, return_url: 'https://shop.example/return' });
    expect(withReturnUrl.status).toBe('succeeded');
    const withoutRedirects = await test.stripe.paymentIntents.create({ ...base, confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    expect(withoutRedirects.status).toBe('succeeded');
  });

  it('creates nothing when validation fails', async () => {
    await createError({ ...base, amount: 100_000_000 });
    await createError({ ...base, payment_method: 'pm_card_nope' });
    expect((await test.stripe.paymentIntents.list()).data).toHaveLength(0);
  });

  it('answers unknown URLs with a Stripe 404', async () => {
    const response = await raw(test.emulator, 'GET', '/v1/payment_intents_typo');
    expect(response.status).toBe(404);
    expect(response.json).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});
