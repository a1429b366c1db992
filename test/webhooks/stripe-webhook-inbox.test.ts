// Failure-matrix row 11 at the API's webhook endpoint: duplicates have one effect, bad signatures
// record nothing, out-of-order events never regress state, and a failed hand-off loses nothing.
import { Client, Connection } from '@temporalio/client';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startStripeEmulator, type StripeEmulator } from '@order-payments/stripe-emulator';
import { createStripeClient } from '../../src/money/stripe/client.js';
import { temporalSignaller } from '../../src/messaging/webhooks/workflow-handoff.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  deliver,
  deliverSigned,
  inboxFor,
  objectState,
  sign,
  startApi,
  stripeEvent,
  WEBHOOK_SECRET,
  type RunningApi,
} from '../support/webhooks.js';
import { developmentDataConverter } from '../support/payload-keys.js';

let db: TestDatabase;
let connection: Connection;
let api: RunningApi;
let emulator: StripeEmulator;
let stripe: Stripe;

beforeAll(async () => {
  db = await createTestDatabase();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  api = await startApi({ db: db.pool, client: new Client({ connection, dataConverter: developmentDataConverter() }) });
  emulator = await startStripeEmulator({ port: 0, webhookDelivery: { retryInitialMs: 20, maxAttempts: 5 } });
  emulator.addWebhookEndpoint({ url: api.webhookUrl, secret: WEBHOOK_SECRET });
  stripe = createStripeClient({ secretKey: 'sk_test_webhook_inbox', apiBase: emulator.url });
});
afterAll(async () => {
  await emulator.close();
  await api.close();
  await connection.close();
  await db.drop();
});

function paymentIntent(id: string, orderId: string, status: string) {
  return { id, object: 'payment_intent', status, amount: 2500, currency: 'usd', metadata: { order_id: orderId } };
}

describe('GET /healthz', () => {
  it('answers 200 while the database is reachable', async () => {
    const response = await fetch(`${api.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });
});

describe('row 11: a webhook delivered twice has one effect', () => {
  it('records a redelivered event (same event ID) once, acknowledges both with 2xx, applies it once', async () => {
    const event = stripeEvent('payment_intent.succeeded', paymentIntent('pi_dup_1', 'order-dup-1', 'succeeded'));
    const first = await deliverSigned(api.webhookUrl, event);
    const second = await deliverSigned(api.webhookUrl, event);

    expect(first).toEqual({ status: 200, body: { received: true, duplicate: false, applied: true } });
    expect(second).toEqual({ status: 200, body: { received: true, duplicate: true } });
    const rows = await inboxFor(db.pool, [event.id as string]);
    expect(rows.inbox).toBe(1);
    expect(rows.events).toHaveLength(1);
    expect(await objectState(db.pool, 'pi_dup_1')).toMatchObject({ status: 'succeeded', event_id: event.id, order_id: 'order-dup-1' });
    // No workflow runs for this order: the hand-off says so, and the receipt stands.
    await vi.waitFor(async () => {
      expect((await inboxFor(db.pool, [event.id as string])).events[0]?.handoff_error).toBe('no running workflow for the order');
    });
  });

  it('lets exactly one of several concurrent deliveries of one event through; the others wait on the inbox row and are duplicates', async () => {
    const event = stripeEvent('payment_intent.payment_failed', paymentIntent('pi_dup_2', 'order-dup-2', 'requires_payment_method'));
    const deliveries = await Promise.all(Array.from({ length: 6 }, () => deliverSigned(api.webhookUrl, event)));

    expect(deliveries.every((delivery) => delivery.status === 200)).toBe(true);
    expect(deliveries.filter((delivery) => delivery.body.duplicate === false)).toHaveLength(1);
    const rows = await inboxFor(db.pool, [event.id as string]);
    expect(rows.inbox).toBe(1);
    expect(rows.events).toHaveLength(1);
  });

  it("is deduplicated end to end: the emulator's webhook_duplicate fault sends the event twice, the inbox keeps one", async () => {
    emulator.addFault({ kind: 'webhook_duplicate', eventType: 'payment_intent.succeeded', orderId: 'order-dup-3' });
    const intent = await stripe.paymentIntents.create({
      amount: 2500,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { order_id: 'order-dup-3' },
    });
    await emulator.webhooksIdle();

    const deliveries = emulator.webhookAttempts().filter((attempt) => attempt.eventType === 'payment_intent.succeeded' && attempt.url === api.webhookUrl);
    const succeededEvents = emulator.events({ type: 'payment_intent.succeeded' }).filter((event) => event.data.object.id === intent.id);
    expect(succeededEvents).toHaveLength(1);
    const eventId = succeededEvents[0]?.id ?? '';
    expect(deliveries.filter((attempt) => attempt.eventId === eventId).map((attempt) => [attempt.duplicate, attempt.status])).toEqual([
      [false, 200],
      [true, 200],
    ]);
    const rows = await inboxFor(db.pool, [eventId]);
    expect(rows.inbox).toBe(1);
    expect(rows.events).toHaveLength(1);
    expect(await objectState(db.pool, intent.id)).toMatchObject({ status: 'succeeded', event_id: eventId });
  });
});

describe('row 11: a bad signature gets 400 and nothing is recorded', () => {
  const event = stripeEvent('payment_intent.succeeded', paymentIntent('pi_badsig', 'order-badsig', 'succeeded'));
  const payload = JSON.stringify(event, null, 2);
  const now = Math.floor(Date.now() / 1000);
  const cases: [string, string, string | null][] = [
    ['missing', payload, null],
    ['malformed', payload, 'not-a-signature'],
    ['signed with another secret', payload, sign(payload, { secret: 'whsec_someone_else_entirely' })],
    ['valid for another body (tampered after signing)', payload.replace('2500', '1'), sign(payload)],
    ['expired (timestamp outside the 300 s tolerance)', payload, sign(payload, { timestamp: now - 301 })],
  ];

  it.each(cases)('%s signature: 400, no inbox row, no receipt, no effect', async (_name, body, signature) => {
    const response = await deliver(api.webhookUrl, body, signature);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'invalid_signature' });
    expect(await inboxFor(db.pool, [event.id as string])).toEqual({ inbox: 0, events: [] });
    expect(await objectState(db.pool, 'pi_badsig')).toBeUndefined();
  });

  it('a correctly signed body that is not a Stripe event: 400 saying what is wrong, nothing recorded', async () => {
    const notAnEvent = JSON.stringify({ id: 'evt_not_really', object: 'event', type: 'payment_intent.succeeded' });
    const response = await deliver(api.webhookUrl, notAnEvent, sign(notAnEvent));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'invalid_event' });
    expect(String(response.body.message)).toContain('created');
    expect(await inboxFor(db.pool, ['evt_not_really'])).toEqual({ inbox: 0, events: [] });
  });
});

describe('row 11: events delivered out of order', () => {
  it('an older event delivered after a newer one is recorded and acknowledged but does not overwrite the newer state', async () => {
    const created = Math.floor(Date.now() / 1000);
    const processing = stripeEvent('payment_intent.processing', paymentIntent('pi_ooo_1', 'order-ooo-1', 'processing'), { created: created - 5 });
    const succeeded = stripeEvent('payment_intent.succeeded', paymentIntent('pi_ooo_1', 'order-ooo-1', 'succeeded'), { created });

    expect((await deliverSigned(api.webhookUrl, succeeded)).body).toMatchObject({ applied: true });
    expect((await deliverSigned(api.webhookUrl, processing)).body).toMatchObject({ duplicate: false, applied: false });

    expect(await objectState(db.pool, 'pi_ooo_1')).toMatchObject({ status: 'succeeded', event_id: succeeded.id });
    const rows = await inboxFor(db.pool, [processing.id as string, succeeded.id as string]);
    expect(rows.inbox).toBe(2);
    expect(rows.events.map((row) => [row.event_type, row.applied])).toEqual([
      ['payment_intent.succeeded', true],
      ['payment_intent.processing', false],
    ]);
  });

  it('a state further along wins even with the same `created` second: a refund is never undone by the success it follows', async () => {
    const created = Math.floor(Date.now() / 1000);
    const refunded = stripeEvent(
      'charge.refunded',
      { id: 'ch_ooo_2', object: 'charge', payment_intent: 'pi_ooo_2', refunded: true, amount_refunded: 2500, metadata: { order_id: 'order-ooo-2' } },
      { created },
    );
    const succeeded = stripeEvent('payment_intent.succeeded', paymentIntent('pi_ooo_2', 'order-ooo-2', 'succeeded'), { created });

    await deliverSigned(api.webhookUrl, refunded);
    expect((await deliverSigned(api.webhookUrl, succeeded)).body).toMatchObject({ applied: false });
    expect(await objectState(db.pool, 'pi_ooo_2')).toMatchObject({ status: 'refunded', amount_refunded: 2500, event_id: refunded.id });
  });

  it("holds end to end: with the emulator's webhook_reorder fault, the success arrives after its refund and changes nothing", async () => {
    emulator.addFault({ kind: 'webhook_reorder', eventType: 'payment_intent.succeeded', orderId: 'order-ooo-3' });
    const intent = await stripe.paymentIntents.create({
      amount: 2500,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { order_id: 'order-ooo-3' },
    });
    await stripe.refunds.create({ payment_intent: intent.id, metadata: { order_id: 'order-ooo-3' } });
    await emulator.webhooksIdle();

    const succeededId = emulator.events({ type: 'payment_intent.succeeded' }).find((event) => event.data.object.id === intent.id)?.id ?? '';
    const refundedId = emulator.events({ type: 'charge.refunded' }).find((event) => 'payment_intent' in event.data.object && event.data.object.payment_intent === intent.id)?.id ?? '';
    const rows = await inboxFor(db.pool, [succeededId, refundedId]);
    // Arrival order: the refund's event first, the success it follows second.
    expect(rows.events.map((row) => [row.event_id, row.applied])).toEqual([
      [refundedId, true],
      [succeededId, false],
    ]);
    expect(await objectState(db.pool, intent.id)).toMatchObject({ status: 'refunded', event_id: refundedId });
  });
});

describe('row 11: the hand-off comes after the receipt', () => {
  it('a Temporal outage during the hand-off loses nothing: 2xx, the receipt and effect committed, the failed hand-off recorded', async () => {
    // A real client whose server is not there: every signal fails.
    const unreachable = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 200 });
    const isolated = await startApi({ db: db.pool, signal: temporalSignaller(new Client({ connection: unreachable }), { timeoutMs: 300 }), handoff: { attempts: 2, retryMs: 10 } });
    try {
      const event = stripeEvent('payment_intent.succeeded', paymentIntent('pi_handoff_1', 'order-handoff-1', 'succeeded'));
      const delivery = await deliverSigned(isolated.webhookUrl, event);
      expect(delivery).toEqual({ status: 200, body: { received: true, duplicate: false, applied: true } });
      await vi.waitFor(
        async () => {
          const [row] = (await inboxFor(db.pool, [event.id as string])).events;
          expect(row?.handoff_error).toMatch(/^signal failed after 2 attempts/);
          expect(row?.handed_off_at).toBeNull();
        },
        { timeout: 15_000, interval: 100 },
      );
      expect(await objectState(db.pool, 'pi_handoff_1')).toMatchObject({ status: 'succeeded' });
    } finally {
      await isolated.close();
      await unreachable.close();
    }
  });
});
