// Authentication as Stripe does it (Bearer or Basic, test keys only, 401s) and each secret key as its own account.
import Stripe from 'stripe';
import { beforeAll, describe, expect, it } from 'vitest';
import { OTHER_SECRET_KEY, chargeParams, errorBody, raw, rejection, sdk, useEmulator } from './helpers.js';

const test = useEmulator();
let alice: Stripe;
let bob: Stripe;

beforeAll(() => {
  alice = test.stripe;
  bob = sdk(test.emulator, { secretKey: OTHER_SECRET_KEY });
});

describe('authentication', () => {
  it('answers 401 without a key', async () => {
    const response = await raw(test.emulator, 'GET', '/v1/payment_intents', { secretKey: null });
    expect(response.status).toBe(401);
    expect(errorBody(response)).toMatchObject({ type: 'invalid_request_error' });
    expect(String(errorBody(response).message)).toContain('You did not provide an API key');
  });

  it('answers 401 to a key that is not a test secret key, as StripeAuthenticationError', async () => {
    const live = sdk(test.emulator, { secretKey: 'sk_live_0123456789abcdef' });
    const error = await rejection(live.paymentIntents.list());
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(error.message).toBe('Invalid API Key provided: sk_live_****cdef');
  });

  it('accepts Basic auth with the key as user name, as Stripe does', async () => {
    const response = await fetch(`${test.emulator.url}/v1/payment_intents`, {
      headers: { authorization: `Basic ${Buffer.from('sk_test_basic:').toString('base64')}` },
    });
    expect(response.status).toBe(200);
  });
});

describe('account scoping', () => {
  it('keeps each key\'s objects apart', async () => {
    const mine = await alice.paymentIntents.create(chargeParams('order-a1'));
    expect((await bob.paymentIntents.list()).data).toEqual([]);
    expect((await bob.paymentIntents.search({ query: "metadata['order_id']:'order-a1'" })).data).toEqual([]);
    const hidden = await rejection(bob.paymentIntents.retrieve(mine.id));
    expect(hidden).toMatchObject({ statusCode: 404, code: 'resource_missing' });
    const refund = await rejection(bob.refunds.create({ payment_intent: mine.id }));
    expect(refund).toMatchObject({ statusCode: 400, code: 'resource_missing' });
    expect((await alice.paymentIntents.list()).data.map((intent) => intent.id)).toEqual([mine.id]);
  });

  it('keeps each key\'s idempotency keys apart', async () => {
    const forAlice = await alice.paymentIntents.create(chargeParams('order-a2'), { idempotencyKey: 'shared-key' });
    const forBob = await bob.paymentIntents.create(chargeParams('order-a2', { amount: 7_000 }), { idempotencyKey: 'shared-key' });
    expect(forBob.id).not.toBe(forAlice.id);
    expect(forBob.amount).toBe(7_000);
    expect(forBob.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    const replayForAlice = await alice.paymentIntents.create(chargeParams('order-a2'), { idempotencyKey: 'shared-key' });
    expect(replayForAlice.id).toBe(forAlice.id);
    const accounts = test.emulator.state().accounts;
    expect(accounts).toHaveLength(2);
    expect(accounts.map((account) => account.idempotencyKeys.length)).toEqual([1, 1]);
  });
});
