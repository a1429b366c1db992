// Webhook delivery to a real HTTP receiver: Stripe's signatures, retries with backoff, and the webhook fault rules.
import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { chargeParams, control, OTHER_SECRET_KEY, sdk, useEmulator } from './helpers.js';
import { Receiver } from './webhook-receiver.js';

const test = useEmulator({ webhookDelivery: { retryInitialMs: 20, retryMaxMs: 100, maxAttempts: 4 } });
let receiver: Receiver;
let secret: string;

beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.close();
});
// After useEmulator's reset, which registered its beforeEach first.
beforeEach(() => {
  test.emulator.setAsyncSettleDelay(60_000);
  receiver.received.length = 0;
  receiver.status = () => 200;
  secret = test.emulator.addWebhookEndpoint({ url: receiver.url });
});
afterEach(async () => {
  await test.emulator.webhooksIdle();
});

describe('webhook signatures', () => {
  it("signs each delivery as Stripe does: the official SDK's constructEvent verifies it, and nothing else does", async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w1'), { idempotencyKey: 'key-w1' });
    await test.emulator.webhooksIdle();

    expect(receiver.types().sort()).toEqual(['charge.succeeded', 'payment_intent.created', 'payment_intent.succeeded']);
    for (const entry of receiver.received) {
      expect(entry.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const verified = test.stripe.webhooks.constructEvent(entry.body, entry.signature ?? '', secret);
      expect(verified.id).toBe(entry.event.id);
      // The SDK's own test header for the same payload, secret and time is byte-identical.
      const timestamp = Number(/^t=(\d+)/.exec(entry.signature ?? '')?.[1]);
      expect(test.stripe.webhooks.generateTestHeaderString({ payload: entry.body, secret, timestamp })).toBe(entry.signature);
      expect(() => test.stripe.webhooks.constructEvent(entry.body, entry.signature ?? '', 'whsec_not_the_secret')).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
      expect(() => test.stripe.webhooks.constructEvent(`${entry.body} `, entry.signature ?? '', secret)).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
      expect(entry.userAgent).toMatch(/^Stripe\/1\.0/);
    }
    expect(secret).toMatch(/^whsec_/);

    const [succeeded] = receiver.ofType('payment_intent.succeeded');
    expect(succeeded?.event).toMatchObject({
      id: expect.stringMatching(/^evt_/) as unknown,
      object: 'event',
      type: 'payment_intent.succeeded',
      api_version: '2026-10-28.endive',
      livemode: false,
      pending_webhooks: 1,
      request: { id: expect.stringMatching(/^req_/) as unknown, idempotency_key: 'key-w1' },
      data: { object: { id: intent.id, object: 'payment_intent', status: 'succeeded', metadata: { order_id: 'order-w1' } } },
    });
    expect(typeof succeeded?.event.created).toBe('number');
    // Once delivered, the event no longer counts the endpoint as pending.
    expect((await test.stripe.events.retrieve(succeeded?.event.id ?? '')).pending_webhooks).toBe(0);
  });

  it('registers endpoints through the control API with a chosen secret, and through POST /v1/webhook_endpoints per account', async () => {
    test.emulator.reset();
    const chosen = 'whsec_chosen_by_the_receiver_0001';
    const registered = await control(test.emulator, 'POST', '/webhook_endpoints', { url: receiver.url, secret: chosen, enabledEvents: ['payment_intent.succeeded'] });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ object: 'webhook_endpoint', secret: chosen, enabled_events: ['payment_intent.succeeded'] });

    await test.stripe.paymentIntents.create(chargeParams('order-w2'));
    await test.emulator.webhooksIdle();
    expect(receiver.types()).toEqual(['payment_intent.succeeded']);
    const [first] = receiver.received;
    expect(test.stripe.webhooks.constructEvent(first?.body ?? '', first?.signature ?? '', chosen).type).toBe('payment_intent.succeeded');

    // Stripe's own API: the secret comes back once, on create; the endpoint sees only its account.
    test.emulator.reset();
    receiver.received.length = 0;
    const endpoint = await test.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['refund.created'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = await test.stripe.webhookEndpoints.list();
    expect(listed.data.map((item) => [item.id, item.secret])).toEqual([[endpoint.id, undefined]]);
    const other = sdk(test.emulator, { secretKey: OTHER_SECRET_KEY });
    const otherIntent = await other.paymentIntents.create(chargeParams('order-w2-other'));
    await other.refunds.create({ payment_intent: otherIntent.id });
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w2'));
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id });
    await test.emulator.webhooksIdle();
    expect(receiver.received.map((entry) => [entry.event.type, entry.event.data.object.id])).toEqual([['refund.created', refund.id]]);
    const [delivery] = receiver.received;
    expect(test.stripe.webhooks.constructEvent(delivery?.body ?? '', delivery?.signature ?? '', endpoint.secret ?? '').id).toBe(delivery?.event.id);

    expect(await test.stripe.webhookEndpoints.del(endpoint.id)).toMatchObject({ id: endpoint.id, deleted: true });
    expect((await test.stripe.webhookEndpoints.list()).data).toEqual([]);
  });
});

describe('events delivered', () => {
  it('sends payment_intent.payment_failed for a decline, and refund.created with charge.refunded for a refund', async () => {
    await test.stripe.paymentIntents
      .create(chargeParams('order-w3', { payment_method: 'pm_card_visa_chargeDeclined' }))
      .catch((error: unknown) => error);
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w3b'));
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id, metadata: { order_id: 'order-w3b' } });
    await test.emulator.webhooksIdle();

    const failed = receiver.ofType('payment_intent.payment_failed');
    expect(failed.map((entry) => entry.event.data.object)).toMatchObject([
      { object: 'payment_intent', status: 'requires_payment_method', last_payment_error: { code: 'card_declined' }, metadata: { order_id: 'order-w3' } },
    ]);
    expect(receiver.ofType('refund.created').map((entry) => entry.event.data.object)).toMatchObject([
      { id: refund.id, object: 'refund', status: 'succeeded', payment_intent: intent.id, metadata: { order_id: 'order-w3b' } },
    ]);
    expect(receiver.ofType('charge.refunded').map((entry) => entry.event.data.object)).toMatchObject([
      { object: 'charge', refunded: true, amount_refunded: intent.amount, payment_intent: intent.id },
    ]);
  });

  it('settles pm_card_async_success later: processing now, payment_intent.succeeded by webhook after the settle delay', async () => {
    test.emulator.setAsyncSettleDelay(50);
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w4', { payment_method: 'pm_card_async_success' }));
    expect(intent.status).toBe('processing');

    await vi.waitFor(() => {
      expect(receiver.ofType('payment_intent.succeeded')).toHaveLength(1);
    });
    const [settled] = receiver.ofType('payment_intent.succeeded');
    // Raised by Stripe itself, not by a request.
    expect(settled?.event).toMatchObject({ request: { id: null, idempotency_key: null }, data: { object: { id: intent.id, status: 'succeeded' } } });
    expect(receiver.ofType('payment_intent.processing')).toHaveLength(1);
    expect((await test.stripe.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');

    // Its refund settles asynchronously too: created pending, then refund.updated.
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id });
    expect(refund.status).toBe('pending');
    await vi.waitFor(() => {
      expect(receiver.ofType('refund.updated')).toHaveLength(1);
    });
    expect(receiver.ofType('refund.updated')[0]?.event.data).toMatchObject({
      object: { id: refund.id, status: 'succeeded' },
      previous_attributes: { status: 'pending' },
    });
  });

  it('settles pm_card_async_fail as payment_intent.payment_failed; a cancelled processing payment never settles', async () => {
    const failing = await test.stripe.paymentIntents.create(chargeParams('order-w5', { payment_method: 'pm_card_async_fail' }));
    expect(failing.status).toBe('processing');
    expect(test.emulator.settlePaymentIntent(failing.id)).toBe(true);
    const after = await test.stripe.paymentIntents.retrieve(failing.id);
    expect(after).toMatchObject({ status: 'requires_payment_method', last_payment_error: { decline_code: 'insufficient_funds' } });

    const cancelled = await test.stripe.paymentIntents.create(chargeParams('order-w5b', { payment_method: 'pm_card_async_success' }));
    await test.stripe.paymentIntents.cancel(cancelled.id);
    expect(test.emulator.settlePaymentIntent(cancelled.id)).toBe(false);
    await test.emulator.webhooksIdle();
    expect(receiver.ofType('payment_intent.payment_failed').map((entry) => entry.event.data.object.id)).toEqual([failing.id]);
    expect(receiver.ofType('payment_intent.succeeded')).toEqual([]);
    expect(receiver.ofType('payment_intent.canceled').map((entry) => entry.event.data.object.id)).toEqual([cancelled.id]);
  });

  it('stops pm_card_authenticationRequired at requires_action with no charge', async () => {
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w6', { payment_method: 'pm_card_authenticationRequired' }));
    expect(intent).toMatchObject({ status: 'requires_action', latest_charge: null, next_action: { type: 'use_stripe_sdk' } });
    await test.emulator.webhooksIdle();
    expect(receiver.ofType('payment_intent.requires_action')).toHaveLength(1);
  });
});

describe('delivery retries', () => {
  it('retries a non-2xx answer with backoff until the endpoint takes it, and counts deliveries and retries', async () => {
    receiver.status = (event, seen) => (event.type === 'payment_intent.succeeded' && seen < 2 ? 500 : 200);
    await test.stripe.paymentIntents.create(chargeParams('order-w7'));
    await test.emulator.webhooksIdle();

    const attempts = test.emulator.webhookAttempts().filter((attempt) => attempt.eventType === 'payment_intent.succeeded');
    expect(attempts.map((attempt) => [attempt.attempt, attempt.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ]);
    // The same event each time, each attempt freshly signed and valid.
    const deliveries = receiver.ofType('payment_intent.succeeded');
    expect(new Set(deliveries.map((entry) => entry.event.id)).size).toBe(1);
    for (const entry of deliveries) expect(() => test.stripe.webhooks.constructEvent(entry.body, entry.signature ?? '', secret)).not.toThrow();
    expect(test.emulator.counters().webhooks).toMatchObject({ deliveries: 5, retries: 2, succeeded: 3, failedAttempts: 2, abandoned: 0 });
  });

  it('retries a refused connection and abandons the delivery after the last attempt', async () => {
    test.emulator.reset();
    const unreachable = await Receiver.start();
    await unreachable.close();
    test.emulator.addWebhookEndpoint({ url: unreachable.url, enabledEvents: ['payment_intent.succeeded'] });
    await test.stripe.paymentIntents.create(chargeParams('order-w8'));
    await test.emulator.webhooksIdle();

    const attempts = test.emulator.webhookAttempts();
    expect(attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4]);
    expect(attempts.every((attempt) => attempt.status === null && attempt.error !== null)).toBe(true);
    expect(test.emulator.counters().webhooks).toMatchObject({ deliveries: 4, retries: 3, abandoned: 1 });
  });
});

describe('webhook faults', () => {
  it('webhook_duplicate delivers the same event twice, each validly signed', async () => {
    test.emulator.addFault({ kind: 'webhook_duplicate', eventType: 'payment_intent.succeeded', orderId: 'order-w9' });
    await test.stripe.paymentIntents.create(chargeParams('order-w9'));
    await test.emulator.webhooksIdle();

    const deliveries = receiver.ofType('payment_intent.succeeded');
    expect(deliveries).toHaveLength(2);
    expect(deliveries[0]?.event.id).toBe(deliveries[1]?.event.id);
    for (const entry of deliveries) expect(test.stripe.webhooks.constructEvent(entry.body, entry.signature ?? '', secret).id).toBe(entry.event.id);
    expect(test.emulator.counters()).toMatchObject({ faults: { webhook_duplicate: 1 }, webhooks: { duplicates: 1 } });
  });

  it('webhook_reorder holds an event until the next one was delivered: the older event arrives second', async () => {
    test.emulator.addFault({ kind: 'webhook_reorder', eventType: 'payment_intent.succeeded' });
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w10'));
    const refund = await test.stripe.refunds.create({ payment_intent: intent.id });
    await test.emulator.webhooksIdle();

    // Released once an event of the refund (the next ones) had been delivered.
    const order = receiver.types();
    const firstOfRefund = Math.min(order.indexOf('refund.created'), order.indexOf('charge.refunded'));
    expect(firstOfRefund).toBeGreaterThanOrEqual(0);
    expect(order.indexOf('payment_intent.succeeded')).toBeGreaterThan(firstOfRefund);
    const refundCreated = receiver.ofType('refund.created')[0]?.event;
    const succeeded = receiver.ofType('payment_intent.succeeded')[0]?.event;
    expect(refundCreated?.data.object.id).toBe(refund.id);
    // Arrival order says nothing about age: `created` still does.
    expect(succeeded?.created).toBeLessThanOrEqual(refundCreated?.created ?? 0);
    expect(test.emulator.counters().faults.webhook_reorder).toBe(1);
  });

  it('webhook_reorder releases a held event after holdMs when no next event comes', async () => {
    test.emulator.addFault({ kind: 'webhook_reorder', eventType: 'refund.created', holdMs: 50 });
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w11'));
    await test.stripe.refunds.create({ payment_intent: intent.id });
    await test.emulator.webhooksIdle();
    expect(receiver.ofType('refund.created')).toHaveLength(1);
  });

  it('webhook_delay holds the first attempt back, so a later event overtakes it; scriptable over the control API', async () => {
    const added = await control(test.emulator, 'POST', '/faults', { kind: 'webhook_delay', eventType: 'payment_intent.*', orderId: 'order-w12', delayMs: 1_000 });
    expect(added.status).toBe(201);
    const intent = await test.stripe.paymentIntents.create(chargeParams('order-w12'));
    await test.stripe.refunds.create({ payment_intent: intent.id });
    await test.emulator.webhooksIdle();

    const order = receiver.types();
    // Only the first payment_intent.* event of the order is delayed (count 1): payment_intent.created.
    expect(order.indexOf('payment_intent.created')).toBeGreaterThan(order.indexOf('refund.created'));
    expect(test.emulator.counters().faults.webhook_delay).toBe(1);
  });

  it('refuses a webhook fault with a request-only field or a bad event type, saying what is wrong', async () => {
    const refused = await control(test.emulator, 'POST', '/faults', { kind: 'webhook_delay', path: '/v1/payment_intents', delayMs: 5 });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('path');
    expect(() => test.emulator.addFault({ kind: 'webhook_delay', delayMs: 5, eventType: 'not a type' })).toThrow(/event type/);
  });
});
