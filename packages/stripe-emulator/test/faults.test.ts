// The request fault rules (drop_response, fail_before/during_execution, latency) as the official SDK meets them.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { chargeParams, control, paymentIntentsFor, raw, rejection, sdk, useEmulator } from './helpers.js';

const test = useEmulator();

describe('drop_response', () => {
  it('commits the effect, then the SDK without retries sees StripeConnectionError', async () => {
    // stripe-node 23 retries a closed connection once even with maxNetworkRetries 0, so the
    // second drop is what lets the error surface; that retry was answered by a (dropped) replay.
    test.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', count: 2 });
    const error = await rejection(test.stripe.paymentIntents.create(chargeParams('order-f1'), { idempotencyKey: 'key-f1' }));
    expect(error).toBeInstanceOf(Stripe.errors.StripeConnectionError);
    const intents = await paymentIntentsFor(test.stripe, 'order-f1');
    expect(intents).toHaveLength(1);
    expect(intents[0]?.status).toBe('succeeded');
    expect(test.emulator.counters()).toMatchObject({ replays: 1, faults: { drop_response: 2 } });

    // The caller's own retry under the same key gets the saved answer: still one PaymentIntent.
    const retried = await test.stripe.paymentIntents.create(chargeParams('order-f1'), { idempotencyKey: 'key-f1' });
    expect(retried.id).toBe(intents[0]?.id);
    expect(retried.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it('a single drop is absorbed by the SDK retrying the closed connection with the same key', async () => {
    test.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents' });
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-f2'));
    expect(intent.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(await paymentIntentsFor(test.stripe, 'order-f2')).toHaveLength(1);
  });

  it('with SDK retries on, the retry replays and exactly one PaymentIntent exists', async () => {
    const retrying = sdk(test.emulator, { maxNetworkRetries: 3 });
    test.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', count: 3 });
    const intent = await retrying.paymentIntents.create(chargeParams('order-f3'));
    expect(intent.status).toBe('succeeded');
    expect(intent.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(await paymentIntentsFor(test.stripe, 'order-f3')).toHaveLength(1);
    expect(test.emulator.counters()).toMatchObject({ replays: 3, faults: { drop_response: 3 } });
  });

  it('destroys the socket before any byte is written', async () => {
    test.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/refunds' });
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-f4'));
    const dropped = await rejection(raw(test.emulator, 'POST', '/v1/refunds', { params: { payment_intent: intent.id }, idempotencyKey: 'key-f4' }));
    expect(dropped).toBeInstanceOf(TypeError);
    const refunds = await test.stripe.refunds.list({ payment_intent: intent.id });
    expect(refunds.data).toHaveLength(1);
    const replay = await raw(test.emulator, 'POST', '/v1/refunds', { params: { payment_intent: intent.id }, idempotencyKey: 'key-f4' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((replay.json as { id: string }).id).toBe(refunds.data[0]?.id);
  });
});

describe('fail_before_execution', () => {
  it('does nothing, and a retry under the same key executes', async () => {
    test.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents' });
    const failed = await rejection(test.stripe.paymentIntents.create(chargeParams('order-f5'), { idempotencyKey: 'key-f5' }));
    expect(failed).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(await paymentIntentsFor(test.stripe, 'order-f5')).toHaveLength(0);
    const retried = await test.stripe.paymentIntents.create(chargeParams('order-f5'), { idempotencyKey: 'key-f5' });
    expect(retried.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(test.emulator.counters().faults.fail_before_execution).toBe(1);
  });

  it('marks its 500 safe to retry, so an SDK with retries recovers on its own', async () => {
    test.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents' });
    const failed = await raw(test.emulator, 'POST', '/v1/payment_intents', { params: { ...chargeParams('order-f6') } });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('stripe-should-retry')).toBe('true');
    test.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents' });
    const intent = await sdk(test.emulator, { maxNetworkRetries: 2 }).paymentIntents.create(chargeParams('order-f6'));
    expect(intent.status).toBe('succeeded');
    expect(await paymentIntentsFor(test.stripe, 'order-f6')).toHaveLength(1);
  });

  it('answers 429 as StripeRateLimitError', async () => {
    test.emulator.addFault({ kind: 'fail_before_execution', status: 429, path: '/v1/payment_intents' });
    const error = await rejection(test.stripe.paymentIntents.create(chargeParams('order-f7')));
    expect(error).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    expect(error).toMatchObject({ statusCode: 429, code: 'rate_limit' });
  });
});

describe('matching', () => {
  it('matches on metadata[order_id]', async () => {
    test.emulator.addFault({ kind: 'fail_before_execution', method: 'POST', path: '/v1/payment_intents', orderId: 'order-doomed', count: 5 });
    expect((await test.stripe.paymentIntents.create(chargeParams('order-fine'))).status).toBe('succeeded');
    expect(await rejection(test.stripe.paymentIntents.create(chargeParams('order-doomed')))).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(test.emulator.listFaults()[0]).toMatchObject({ fired: 1, remaining: 4 });
  });

  it('matches on method and path patterns', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-f8', { confirm: false }));
    test.emulator.addFault({ kind: 'fail_before_execution', method: 'POST', path: '/v1/payment_intents/*/cancel' });
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).id).toBe(intent.id);
    expect(await rejection(test.stripe.paymentIntents.cancel(intent.id))).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect((await test.stripe.paymentIntents.cancel(intent.id)).status).toBe('canceled');
  });

  it('fires with a seeded probability that reproduces exactly', async () => {
    async function pattern(seed: number): Promise<number[]> {
      test.emulator.reset();
      test.emulator.addFault({ kind: 'fail_before_execution', method: 'GET', path: '/v1/payment_intents', probability: 0.5, seed });
      const statuses: number[] = [];
      for (let i = 0; i < 24; i += 1) statuses.push((await raw(test.emulator, 'GET', '/v1/payment_intents')).status);
      return statuses;
    }
    const first = await pattern(42);
    expect(await pattern(42)).toEqual(first);
    expect(first).toContain(200);
    expect(first).toContain(500);
    expect(await pattern(7)).not.toEqual(first);
  });
});

describe('latency', () => {
  it('delays execution by the given milliseconds', async () => {
    test.emulator.addFault({ kind: 'latency', latencyMs: 250, method: 'GET', path: '/v1/payment_intents', count: 1 });
    const started = performance.now();
    await test.stripe.paymentIntents.list();
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    const again = performance.now();
    await test.stripe.paymentIntents.list();
    expect(performance.now() - again).toBeLessThan(240);
    expect(test.emulator.counters().faults.latency).toBe(1);
  });
});

describe('managing rules', () => {
  it('lists, removes and clears through the control API', async () => {
    const added = await control(test.emulator, 'POST', '/faults', { kind: 'latency', latencyMs: 10, path: '/v1/refunds' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ kind: 'latency', latencyMs: 10, remaining: 1, fired: 0 });
    await control(test.emulator, 'POST', '/faults', { kind: 'drop_response', path: '/v1/payment_intents', probability: 0.1, seed: 3 });
    const listed = await control(test.emulator, 'GET', '/faults');
    expect(listed.body.data).toHaveLength(2);

    const removed = await control(test.emulator, 'DELETE', `/faults/${String(added.body.id)}`);
    expect(removed).toMatchObject({ status: 200, body: { removed: true } });
    expect(test.emulator.listFaults()).toHaveLength(1);
    expect((await control(test.emulator, 'DELETE', '/faults/fault_none')).status).toBe(404);

    await control(test.emulator, 'DELETE', '/faults');
    expect(test.emulator.listFaults()).toEqual([]);
  });

  it('rejects a malformed rule with a 400 and installs nothing', async () => {
    for (const rule of [
      { kind: 'explode', path: '/v1/refunds' },
      { kind: 'latency', path: '/v1/refunds' },
      { kind: 'fail_before_execution', status: 418, path: '/v1/refunds' },
      { kind: 'drop_response', path: 'v1/refunds' },
      { kind: 'drop_response', path: '/v1/refunds', probability: 2 },
    ]) {
      const response = await control(test.emulator, 'POST', '/faults', rule);
      expect(response.status).toBe(400);
    }
    expect(test.emulator.listFaults()).toEqual([]);
    expect(() => test.emulator.addFault({ kind: 'latency', latencyMs: -1, path: '/v1/refunds' })).toThrow();
  });

  it('programmatic clearFaults and removeFault stop a rule from firing', async () => {
    const rule = test.emulator.addFault({ kind: 'fail_before_execution', path: '/v1/payment_intents', count: 10 });
    expect(test.emulator.removeFault(rule.id)).toBe(true);
    expect((await raw(test.emulator, 'GET', '/v1/payment_intents')).status).toBe(200);
    test.emulator.addFault({ kind: 'fail_before_execution', path: '/v1/payment_intents', count: 10 });
    test.emulator.clearFaults();
    expect((await raw(test.emulator, 'GET', '/v1/payment_intents')).status).toBe(200);
  });
});
