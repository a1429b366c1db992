// Proves the receipts consumer's inbox: each message applied once despite redeliveries or racing
// deliveries, in any arrival order; malformed messages terminated; database failures redelivered.
import { headers } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { OrderEvent } from '../../src/messaging/order-event.js';
import { createReceiptsConsumer, ensureReceiptsConsumer, type ReceiptsConsumerConfig } from '../../src/messaging/receipts/consumer.js';
import { applyOrderEvent } from '../../src/messaging/receipts/receipts.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestStream, eventually, type TestStream } from '../support/nats.js';

const logger = pino({ level: 'silent' });
let db: TestDatabase;
let stream: TestStream | null = null;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.pool.query('truncate processed_messages, receipts');
});
afterEach(async () => {
  await stream?.close();
  stream = null;
});

function event(overrides: Partial<OrderEvent> = {}): OrderEvent {
  return {
    event_type: 'order.paid',
    order_id: 'O-1',
    status: 'paid',
    amount_minor: 2500,
    currency: 'usd',
    payment_intent_id: 'pi_1',
    refund_id: null,
    reason: null,
    occurred_at: new Date().toISOString(),
    ...overrides,
  };
}

async function receipts() {
  const { rows } = await db.pool.query<{ message_id: string; event_type: string; stripe_object_id: string | null }>(
    'select message_id, event_type, stripe_object_id from receipts order by message_id',
  );
  return rows;
}

/** Runs the consumer on a fresh stream until `until` resolves; returns its config. */
async function consuming<T>(
  target: TestStream,
  until: () => Promise<T>,
  options: { retryDelayMs?: number } = {},
): Promise<{ config: ReceiptsConsumerConfig; value: T }> {
  const config = { stream: target.stream, durable: 'receipts', subjectPrefix: target.subjectPrefix };
  await ensureReceiptsConsumer(target.nc, config);
  const stop = new AbortController();
  const running = createReceiptsConsumer({ ...config, db: db.servicePool('receipts'), nc: target.nc, logger, ...options }).run(stop.signal);
  try {
    return { config, value: await until() };
  } finally {
    stop.abort();
    await running;
  }
}

async function settled(target: TestStream, count: number) {
  return eventually(`${count} messages settled`, async () => {
    const info = await target.jsm.consumers.info(target.stream, 'receipts');
    return info.ack_floor.stream_seq === count && info.num_pending === 0 && info.num_ack_pending === 0 ? info : undefined;
  });
}

describe('receipts consumer (inbox)', () => {
  it('applies a message once: a second delivery of the same message ID changes nothing', async () => {
    const outcomes = [await applyOrderEvent(db.servicePool('receipts'), '41', event()), await applyOrderEvent(db.servicePool('receipts'), '41', event())];

    expect(outcomes).toEqual(['applied', 'duplicate']);
    expect(await receipts()).toEqual([{ message_id: '41', event_type: 'order.paid', stripe_object_id: 'pi_1' }]);
  });

  it('two deliveries of one message racing on two connections apply it once', async () => {
    const outcomes = await Promise.all([applyOrderEvent(db.servicePool('receipts'), '42', event()), applyOrderEvent(db.servicePool('receipts'), '42', event())]);

    expect(outcomes.sort()).toEqual(['applied', 'duplicate']);
    expect(await receipts()).toHaveLength(1);
  });

  it("never assumes arrival order: an order's events arriving newest first each produce their receipt", async () => {
    stream = await createTestStream();
    const target = stream;
    const published = [
      { id: '3', event: event({ event_type: 'order.failed', status: 'compensated', refund_id: 're_1', reason: 'OutOfStock' }) },
      { id: '2', event: event({ event_type: 'order.refunded', status: 'compensating', refund_id: 're_1' }) },
      { id: '1', event: event() },
    ];
    for (const { id, event: payload } of published) {
      await target.js.publish(`${target.subjectPrefix}.${payload.event_type}`, JSON.stringify(payload), { msgID: id });
    }

    await consuming(target, () => settled(target, 3));

    expect(await receipts()).toEqual([
      { message_id: '1', event_type: 'order.paid', stripe_object_id: 'pi_1' },
      { message_id: '2', event_type: 'order.refunded', stripe_object_id: 're_1' },
      { message_id: '3', event_type: 'order.failed', stripe_object_id: 'pi_1' },
    ]);
  });

  it('a message without Nats-Msg-Id, or with a malformed event, is terminated: not applied and not redelivered', async () => {
    stream = await createTestStream();
    const target = stream;
    await target.js.publish(`${target.subjectPrefix}.order.paid`, JSON.stringify(event()));
    await target.js.publish(`${target.subjectPrefix}.order.paid`, JSON.stringify({ ...event(), amount_minor: -5 }), { msgID: '7' });
    const rawHeaders = headers();
    rawHeaders.set('Nats-Msg-Id', '8');
    await target.nc.request(`${target.subjectPrefix}.order.paid`, 'not json', { headers: rawHeaders, timeout: 5_000 });

    const { value: info } = await consuming(target, () => settled(target, 3));

    // Three messages, three deliveries: none came back.
    expect(info.delivered.consumer_seq).toBe(3);
    expect(await receipts()).toEqual([]);
    const { rows: inbox } = await db.pool.query('select 1 from processed_messages');
    expect(inbox).toEqual([]);
  });

  it('an event the database cannot take is not acked; it is redelivered and applied once the database can', async () => {
    stream = await createTestStream();
    const target = stream;
    await db.pool.query('alter table receipts rename to receipts_away');
    try {
      await target.js.publish(`${target.subjectPrefix}.order.paid`, JSON.stringify(event()), { msgID: '9' });
      await consuming(
        target,
        async () => {
          // Delivered, refused by the database, nacked, delivered again.
          await eventually('a redelivery', async () => {
            const current = await target.jsm.consumers.info(target.stream, 'receipts');
            return current.delivered.consumer_seq >= 2 ? current : undefined;
          });
          // Nothing was applied while the table was away, not even the inbox row.
          const { rows: inbox } = await db.pool.query('select 1 from processed_messages');
          expect(inbox).toEqual([]);
          await db.pool.query('alter table receipts_away rename to receipts');
          return settled(target, 1);
        },
        { retryDelayMs: 100 },
      );
    } finally {
      await db.pool.query('alter table if exists receipts_away rename to receipts');
    }
    expect(await receipts()).toEqual([{ message_id: '9', event_type: 'order.paid', stripe_object_id: 'pi_1' }]);
  });

  it("a merchant refund's event (order.merchant_refunded) is applied like the others: one receipt per refund, for the Refund", async () => {
    stream = await createTestStream();
    const target = stream;
    const published = [
      { id: '21', event: event({ event_type: 'order.merchant_refunded', status: 'completed', amount_minor: 500, refund_id: 're_a' }) },
      { id: '22', event: event({ event_type: 'order.merchant_refunded', status: 'completed', amount_minor: 700, refund_id: 're_b' }) },
      { id: '21', event: event({ event_type: 'order.merchant_refunded', status: 'completed', amount_minor: 500, refund_id: 're_a' }) },
    ];
    for (const { id, event: payload } of published) {
      await target.js.publish(`${target.subjectPrefix}.${payload.event_type}`, JSON.stringify(payload), { msgID: id });
    }

    // JetStream drops the third (a republish inside its duplicate window): two messages.
    await consuming(target, () => settled(target, 2));

    expect(await receipts()).toEqual([
      { message_id: '21', event_type: 'order.merchant_refunded', stripe_object_id: 're_a' },
      { message_id: '22', event_type: 'order.merchant_refunded', stripe_object_id: 're_b' },
    ]);
    // Past the duplicate window, the inbox drops a republish.
    expect(await applyOrderEvent(db.pool, '21', event({ event_type: 'order.merchant_refunded', status: 'completed', refund_id: 're_a' }))).toBe('duplicate');
  });

  it("a refund request's failure (order.refund_failed) is applied with its reason: a receipt for the PaymentIntent, no Refund", async () => {
    stream = await createTestStream();
    const target = stream;
    const failed = event({
      event_type: 'order.refund_failed',
      status: 'completed',
      amount_minor: 1500,
      refund_id: null,
      reason: 'refund of 1500 on pi_1 refused by Stripe: amount exceeds what is refundable',
      refund_request_id: 'rfd_failed',
    });
    await target.js.publish(`${target.subjectPrefix}.${failed.event_type}`, JSON.stringify(failed), { msgID: '31' });
    await consuming(target, () => settled(target, 1));
    const { rows } = await db.pool.query<{ event_type: string; stripe_object_id: string | null; reason: string | null; amount_minor: number }>(
      "select event_type, stripe_object_id, reason, amount_minor from receipts where message_id = '31'",
    );
    expect(rows).toEqual([{ event_type: 'order.refund_failed', stripe_object_id: failed.payment_intent_id, reason: failed.reason, amount_minor: 1500 }]);
  });
});
