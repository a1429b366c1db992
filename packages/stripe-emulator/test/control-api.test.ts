// The control API under /_emulator: state dumps, counters, fault rules, the clock, events, reset.
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { chargeParams, control, raw, rejection, useEmulator } from './helpers.js';

const test = useEmulator();

describe('inspection', () => {
  it('dumps objects, keys and counters', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-c1'), { idempotencyKey: 'key-c1' });
    await test.stripe.paymentIntents.create(chargeParams('order-c1'), { idempotencyKey: 'key-c1' });
    await rejection(test.stripe.paymentIntents.create(chargeParams('order-c1', { amount: 1 }), { idempotencyKey: 'key-c1' }));
    await test.stripe.refunds.create({ payment_intent: intent.id, amount: 500 });

    const { status, body } = await control(test.emulator, 'GET', '/state');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      retentionMs: 24 * 60 * 60 * 1000,
      counters: {
        requests: 4,
        replays: 1,
        conflicts: 1,
        idempotencyErrors: 1,
        idempotencyKeyInUse: 0,
        responsesByStatus: { '200': 3, '400': 1 },
      },
    });
    const [account] = body.accounts as { keyHint: string; paymentIntents: { id: string }[]; charges: unknown[]; refunds: { amount: number }[]; idempotencyKeys: { key: string; state: string; status: number }[] }[];
    expect(account?.keyHint).toBe('sk_test_****ance');
    expect(account?.paymentIntents.map((pi) => pi.id)).toEqual([intent.id]);
    expect(account?.charges).toHaveLength(1);
    expect(account?.refunds.map((refund) => refund.amount)).toEqual([500]);
    expect(account?.idempotencyKeys.find((key) => key.key === 'key-c1')).toMatchObject({ state: 'completed', status: 200 });
    expect(JSON.stringify(body)).not.toContain('sk_test_emulator_conformance');

    const counters = await control(test.emulator, 'GET', '/counters');
    expect(counters.body).toEqual(test.emulator.counters());
  });

  it('counts faults by kind', async () => {
    test.emulator.addFault({ kind: 'fail_before_execution', path: '/v1/payment_intents', count: 2 });
    test.emulator.addFault({ kind: 'latency', latencyMs: 1, path: '/v1/refunds' });
    await raw(test.emulator, 'GET', '/v1/payment_intents');
    await raw(test.emulator, 'GET', '/v1/payment_intents');
    await raw(test.emulator, 'GET', '/v1/refunds');
    expect(test.emulator.counters().faults).toEqual({
      drop_response: 0,
      fail_before_execution: 2,
      fail_during_execution: 0,
      latency: 1,
      webhook_duplicate: 0,
      webhook_reorder: 0,
      webhook_delay: 0,
    });
  });

  it('resets everything', async () => {
    await test.stripe.paymentIntents.create(chargeParams('order-c2'), { idempotencyKey: 'key-c2' });
    test.emulator.addFault({ kind: 'latency', latencyMs: 1, path: '/v1/refunds' });
    test.emulator.advanceClock(60_000);
    const reset = await control(test.emulator, 'POST', '/reset');
    expect(reset.status).toBe(200);
    expect((await test.stripe.paymentIntents.list()).data).toEqual([]);
    expect(test.emulator.listFaults()).toEqual([]);
    expect(test.emulator.counters().requests).toBe(1);
    expect((await control(test.emulator, 'GET', '/clock')).body.offsetMs).toBe(0);
    const again = await test.stripe.paymentIntents.create(chargeParams('order-c2'), { idempotencyKey: 'key-c2' });
    expect(again.lastResponse.headers['idempotent-replayed']).toBeUndefined();
  });

  it('moves the clock forward only', async () => {
    const before = test.emulator.now();
    const moved = await control(test.emulator, 'POST', '/clock/advance', { ms: 3_600_000 });
    expect(moved.status).toBe(200);
    expect(Number(moved.body.nowMs)).toBeGreaterThanOrEqual(before + 3_600_000);
    expect((await control(test.emulator, 'POST', '/clock/advance', { ms: -5 })).status).toBe(400);
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-c3'));
    expect(intent.created * 1000).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
  });

  it('answers health checks', async () => {
    expect(await control(test.emulator, 'GET', '/health')).toEqual({ status: 200, body: { ok: true } });
  });
});

describe('events', () => {
  it('records Stripe Event objects for charges, declines and refunds', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-e1'), { idempotencyKey: 'key-e1' });
    await rejection(test.stripe.paymentIntents.create(chargeParams('order-e2', { payment_method: 'pm_card_chargeDeclined' })));
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id });

    const { body } = await control(test.emulator, 'GET', '/events');
    const events = body.data as { type: string; object: string; data: { object: { id: string } }; request: { idempotency_key: string | null } }[];
    const types = events.map((event) => event.type);
    for (const type of ['payment_intent.created', 'payment_intent.succeeded', 'payment_intent.payment_failed', 'charge.succeeded', 'charge.failed', 'charge.refunded', 'refund.created']) {
      expect(types).toContain(type);
    }
    const succeeded = events.find((event) => event.type === 'payment_intent.succeeded');
    expect(succeeded).toMatchObject({ object: 'event', data: { object: { id: intent.id } }, request: { idempotency_key: 'key-e1' } });
    const refunded = events.find((event) => event.type === 'refund.created');
    expect(refunded?.data.object.id).toBe(refund.id);

    const onlyRefunds = await control(test.emulator, 'GET', '/events?type=refund.created');
    expect(onlyRefunds.body.data).toHaveLength(1);

    // The same events through Stripe's own API, scoped to the key.
    const viaApi = await test.stripe.events.list({ type: 'payment_intent.succeeded' });
    expect(viaApi.data.map((event) => (event.data.object as { id: string }).id)).toEqual([intent.id]);
    const one = await test.stripe.events.retrieve(viaApi.data[0]?.id ?? '');
    expect(one.type).toBe('payment_intent.succeeded');
  });

  it('keeps a snapshot of the object as it was', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-e3', { confirm: false }));
    await test.stripe.paymentIntents.cancel(intent.id);
    const created = test.emulator.events({ type: 'payment_intent.created' })[0];
    expect((created?.data.object as Stripe.PaymentIntent).status).toBe('requires_confirmation');
    const canceled = test.emulator.events({ type: 'payment_intent.canceled' })[0];
    expect((canceled?.data.object as Stripe.PaymentIntent).status).toBe('canceled');
  });
});
