// Stripe's idempotency semantics: replays byte for byte, what is saved and what is not, 400/409 conflicts, key expiry.
import qs from 'qs';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { startStripeEmulator } from '../src/index.js';
import { chargeParams, control, errorBody, paymentIntentsFor, raw, rejection, sdk, useEmulator } from './helpers.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const test = useEmulator();

/** The saga's charge as a form body, in the SDK's encoding. */
function chargeBody(orderId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...chargeParams(orderId), ...overrides };
}

describe('replays', () => {
  it('answers a repeated key with the first response, byte for byte, marked Idempotent-Replayed', async () => {
    const first = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-i1'), idempotencyKey: 'key-i1' });
    const second = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-i1'), idempotencyKey: 'key-i1' });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('idempotency-key')).toBe('key-i1');
    expect(second.headers.get('original-request')).toBe(first.headers.get('request-id'));
    expect(second.text).toBe(first.text);
    expect(await paymentIntentsFor(test.stripe, 'order-i1')).toHaveLength(1);
    expect(test.emulator.counters().replays).toBe(1);
  });

  it('returns the same object to the SDK, and the SDK sees the replay header', async () => {
    const first = await test.stripe.paymentIntents.create(chargeParams('order-i2'), { idempotencyKey: 'key-i2' });
    const second = await test.stripe.paymentIntents.create(chargeParams('order-i2'), { idempotencyKey: 'key-i2' });
    expect(second.id).toBe(first.id);
    expect(second.latest_charge).toBe(first.latest_charge);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
  });

  it('compares parsed parameters, not their order on the wire', async () => {
    const params = chargeBody('order-i3');
    const forwards = qs.stringify(params);
    const backwards = forwards.split('&').reverse().join('&');
    expect(backwards).not.toBe(forwards);
    const first = await raw(test.emulator, 'POST', '/v1/payment_intents', { body: forwards, idempotencyKey: 'key-i3' });
    const second = await raw(test.emulator, 'POST', '/v1/payment_intents', { body: backwards, idempotencyKey: 'key-i3' });
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
  });

  it('saves a 402 decline and replays it', async () => {
    const params = chargeBody('order-i4', { payment_method: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
    const first = await raw(test.emulator, 'POST', '/v1/payment_intents', { params, idempotencyKey: 'key-i4' });
    const second = await raw(test.emulator, 'POST', '/v1/payment_intents', { params, idempotencyKey: 'key-i4' });
    expect(first.status).toBe(402);
    expect(second.status).toBe(402);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(errorBody(second)).toMatchObject({ decline_code: 'insufficient_funds' });
    expect(await paymentIntentsFor(test.stripe, 'order-i4')).toHaveLength(1);

    const viaSdk = await rejection(
      test.stripe.paymentIntents.create(chargeParams('order-i4', { payment_method: 'pm_card_visa_chargeDeclinedInsufficientFunds' }), {
        idempotencyKey: 'key-i4',
      }),
    );
    expect(viaSdk).toBeInstanceOf(Stripe.errors.StripeCardError);
  });

  it('saves a 500 raised during execution and replays it', async () => {
    test.emulator.addFault({ kind: 'fail_during_execution', method: 'POST', path: '/v1/payment_intents' });
    const first = await rejection(test.stripe.paymentIntents.create(chargeParams('order-i5'), { idempotencyKey: 'key-i5' }));
    expect(first).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(first).toMatchObject({ statusCode: 500 });
    // The rule is spent, so only the saved answer can explain a second 500.
    const second = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-i5'), idempotencyKey: 'key-i5' });
    expect(second.status).toBe(500);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('stripe-should-retry')).toBe('false');
    expect(await paymentIntentsFor(test.stripe, 'order-i5')).toHaveLength(0);
  });
});

describe('what is not saved', () => {
  it('a request rejected by validation: the key is free for a corrected request', async () => {
    const rejected = await rejection(
      test.stripe.paymentIntents.create(chargeParams('order-i6', { amount: 100_000_000 }), { idempotencyKey: 'key-i6' }),
    );
    expect(rejected).toMatchObject({ statusCode: 400, code: 'amount_too_large' });
    const accepted = await test.stripe.paymentIntents.create(chargeParams('order-i6'), { idempotencyKey: 'key-i6' });
    expect(accepted.status).toBe('succeeded');
    expect(accepted.lastResponse.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a 401', async () => {
    const unauthenticated = await raw(test.emulator, 'POST', '/v1/payment_intents', {
      params: chargeBody('order-i7'),
      idempotencyKey: 'key-i7',
      secretKey: null,
    });
    expect(unauthenticated.status).toBe(401);
    const authenticated = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-i7'), idempotencyKey: 'key-i7' });
    expect(authenticated.status).toBe(200);
    expect(authenticated.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a 429 or a 500 that struck before execution', async () => {
    for (const status of [429, 500] as const) {
      const orderId = `order-i8-${status}`;
      test.emulator.addFault({ kind: 'fail_before_execution', status, method: 'POST', path: '/v1/payment_intents', orderId });
      const failed = await rejection(test.stripe.paymentIntents.create(chargeParams(orderId), { idempotencyKey: `key-${orderId}` }));
      expect(failed).toBeInstanceOf(status === 429 ? Stripe.errors.StripeRateLimitError : Stripe.errors.StripeAPIError);
      expect(failed).toMatchObject({ statusCode: status });
      expect(await paymentIntentsFor(test.stripe, orderId)).toHaveLength(0);
      const retried = await test.stripe.paymentIntents.create(chargeParams(orderId), { idempotencyKey: `key-${orderId}` });
      expect(retried.status).toBe('succeeded');
      expect(retried.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    }
  });
});

describe('conflicts', () => {
  it('the same key with other parameters is an idempotency_error, and nothing happens', async () => {
    await test.stripe.paymentIntents.create(chargeParams('order-i9'), { idempotencyKey: 'key-i9' });
    const error = await rejection(
      test.stripe.paymentIntents.create(chargeParams('order-i9', { amount: 9_999 }), { idempotencyKey: 'key-i9' }),
    );
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error).toMatchObject({ statusCode: 400, rawType: 'idempotency_error' });
    expect(error.message).toBe(
      "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than 'key-i9' if you meant to execute a different request.",
    );
    const intents = await paymentIntentsFor(test.stripe, 'order-i9');
    expect(intents.map((intent) => intent.amount)).toEqual([2_500]);
    expect(test.emulator.counters()).toMatchObject({ conflicts: 1, idempotencyErrors: 1 });
  });

  it('the same key on another endpoint is an idempotency_error', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-i10'), { idempotencyKey: 'key-i10' });
    const error = await rejection(test.stripe.refunds.create({ payment_intent: intent.id }, { idempotencyKey: 'key-i10' }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(error.message).toBe(
      "Keys for idempotent requests can only be used for the same endpoint they were first used for ('POST /v1/payment_intents' vs 'POST /v1/refunds'). Try using a key other than 'key-i10' if you meant to execute a different request.",
    );
    expect((await test.stripe.refunds.list({ payment_intent: intent.id })).data).toHaveLength(0);
  });

  it('the same key while the first request executes is a 409 idempotency_key_in_use, then a replay', async () => {
    test.emulator.addFault({ kind: 'latency', latencyMs: 400, method: 'POST', path: '/v1/payment_intents' });
    const first = test.stripe.paymentIntents.create(chargeParams('order-race'), { idempotencyKey: 'key-race' });
    await waitUntil(() => test.emulator.state().accounts[0]?.idempotencyKeys.some((key) => key.state === 'in_progress') ?? false);

    const second = await rejection(test.stripe.paymentIntents.create(chargeParams('order-race'), { idempotencyKey: 'key-race' }));
    // Stripe's SDK maps every 409 to StripeAPIError, whatever the envelope's type.
    expect(second).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(second).toMatchObject({ statusCode: 409, code: 'idempotency_key_in_use' });
    expect(second.message).toBe(
      'There is currently another in-progress request using this Idempotent Key (that probably means you submitted twice, and the other request is still going through): key-race. Please try again later.',
    );

    const created = await first;
    expect(created.status).toBe('succeeded');
    const third = await test.stripe.paymentIntents.create(chargeParams('order-race'), { idempotencyKey: 'key-race' });
    expect(third.id).toBe(created.id);
    expect(third.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(await paymentIntentsFor(test.stripe, 'order-race')).toHaveLength(1);
    expect(test.emulator.counters()).toMatchObject({ conflicts: 1, idempotencyKeyInUse: 1, replays: 1 });
  });

  it('raw concurrent requests: exactly one executes, one is a 409', async () => {
    test.emulator.addFault({ kind: 'latency', latencyMs: 300, method: 'POST', path: '/v1/payment_intents' });
    const send = () => raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-race-2'), idempotencyKey: 'key-race-2' });
    const [a, b] = await Promise.all([send(), send()]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const conflict = a.status === 409 ? a : b;
    expect(errorBody(conflict)).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_in_use' });
    expect(await paymentIntentsFor(test.stripe, 'order-race-2')).toHaveLength(1);
  });
});

describe('keys', () => {
  it('accepts 255 characters and rejects 256 with a 400 that is not saved', async () => {
    const longest = 'k'.repeat(255);
    expect((await test.stripe.paymentIntents.create(chargeParams('order-k1'), { idempotencyKey: longest })).status).toBe('succeeded');
    const tooLong = await rejection(test.stripe.paymentIntents.create(chargeParams('order-k2'), { idempotencyKey: 'k'.repeat(256) }));
    expect(tooLong).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(tooLong).toMatchObject({ statusCode: 400 });
    expect(await paymentIntentsFor(test.stripe, 'order-k2')).toHaveLength(0);
  });

  it('are ignored on GET', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-k3'), { idempotencyKey: 'key-k3' });
    const first = await raw(test.emulator, 'GET', `/v1/payment_intents/${intent.id}`, { idempotencyKey: 'key-k3' });
    const second = await raw(test.emulator, 'GET', `/v1/payment_intents/${intent.id}`, { idempotencyKey: 'key-k3' });
    for (const response of [first, second]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(test.emulator.counters()).toMatchObject({ replays: 0, conflicts: 0 });
  });

  it('generated by the SDK itself (stripe-node-retry-...) behave the same way', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-k4'));
    const saved = test.emulator.state().accounts[0]?.idempotencyKeys.map((entry) => entry.key) ?? [];
    expect(saved).toHaveLength(1);
    const key = saved[0] ?? '';
    expect(key).toMatch(/^stripe-node-retry-[0-9a-f-]{36}$/);
    expect(intent.lastResponse.idempotencyKey).toBe(key);
    const replay = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-k4'), idempotencyKey: key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((replay.json as { id: string }).id).toBe(intent.id);
    const mismatch = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: chargeBody('order-k5'), idempotencyKey: key });
    expect(errorBody(mismatch)).toMatchObject({ type: 'idempotency_error' });
  });
});

describe('retention', () => {
  it('forgets a key once the retention has passed on the emulator clock, and a new request runs', async () => {
    const first = await test.stripe.paymentIntents.create(chargeParams('order-t1'), { idempotencyKey: 'key-t1' });
    test.emulator.advanceClock(DAY_MS - 10_000);
    const stillRemembered = await test.stripe.paymentIntents.create(chargeParams('order-t1'), { idempotencyKey: 'key-t1' });
    expect(stillRemembered.id).toBe(first.id);

    const advanced = await control(test.emulator, 'POST', '/clock/advance', { ms: 10_000 });
    expect(advanced.status).toBe(200);
    expect(advanced.body.offsetMs).toBe(DAY_MS);
    const afterExpiry = await test.stripe.paymentIntents.create(chargeParams('order-t1'), { idempotencyKey: 'key-t1' });
    expect(afterExpiry.id).not.toBe(first.id);
    expect(afterExpiry.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(await paymentIntentsFor(test.stripe, 'order-t1')).toHaveLength(2);
  });

  it('is configurable', async () => {
    const shortLived = await startStripeEmulator({ port: 0, retentionMs: 60_000 });
    try {
      const client = sdk(shortLived);
      const first = await client.paymentIntents.create(chargeParams('order-t2'), { idempotencyKey: 'key-t2' });
      // Real time passes too, so leave it a margin on both sides.
      shortLived.advanceClock(50_000);
      expect((await client.paymentIntents.create(chargeParams('order-t2'), { idempotencyKey: 'key-t2' })).id).toBe(first.id);
      shortLived.advanceClock(10_000);
      expect((await client.paymentIntents.create(chargeParams('order-t2'), { idempotencyKey: 'key-t2' })).id).not.toBe(first.id);
    } finally {
      await shortLived.close();
    }
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
