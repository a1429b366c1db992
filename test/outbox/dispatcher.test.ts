// Proves the outbox dispatcher publishes at least once and marks sent only after the ack: a crash
// republishes (row 12) harmlessly, two dispatchers never double-publish, a broker outage loses nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import type { PubAck } from '@nats-io/jetstream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboxDispatcher, type OutboxDispatcherDeps } from '../../src/messaging/outbox/dispatcher.js';
import type { OutboxRow } from '../../src/messaging/outbox/outbox-store.js';
import { createReceiptsConsumer, ensureReceiptsConsumer } from '../../src/messaging/receipts/consumer.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestStream, eventually, startOwnNatsServer, type TestStream } from '../support/nats.js';
import { outboxState, paidOrdersInOutbox } from '../support/outbox-orders.js';

const logger = pino({ level: 'silent' });
let db: TestDatabase;
let stream: TestStream | null = null;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.pool.query('truncate outbox, processed_messages, receipts');
});
afterEach(async () => {
  await stream?.close();
  stream = null;
});

async function useStream(options: { url?: string; duplicateWindowMs?: number } = {}): Promise<TestStream> {
  stream = await createTestStream(options);
  return stream;
}

function dispatcherOn(target: TestStream, overrides: Partial<OutboxDispatcherDeps> = {}) {
  return createOutboxDispatcher({ db: db.servicePool('outbox'), js: target.js, subjectPrefix: target.subjectPrefix, logger, ...overrides });
}

class InjectedCrash extends Error {}

describe('outbox dispatcher', () => {
  it('publishes each row on <prefix>.<event_type> with Nats-Msg-Id = the outbox ID, and marks it sent only after the ack', async () => {
    const target = await useStream();
    const ids = await paidOrdersInOutbox(db.pool, 3);
    const sentWhenAcked: boolean[] = [];
    const dispatcher = dispatcherOn(target, {
      async afterPublish(row) {
        // Another connection's view: the broker has acked, the row must not yet be marked sent.
        const { rows } = await db.pool.query<{ sent: boolean }>('select sent_at is not null as sent from outbox where id = $1', [row.id]);
        sentWhenAcked.push(rows[0]?.sent ?? true);
      },
    });

    const outcome = await dispatcher.dispatchBatch();

    expect(outcome).toEqual({ claimed: 3, sent: ids, duplicates: [], failed: null });
    expect(sentWhenAcked).toEqual([false, false, false]);
    const stored = await target.storedMessages();
    expect(stored.map((message) => [message.subject, message.msgId])).toEqual(
      ids.map((id) => [`${target.subjectPrefix}.order.paid`, String(id)]),
    );
    const { rows: payloads } = await db.pool.query<{ payload: unknown }>('select payload from outbox order by id');
    expect(stored.map((message) => message.data)).toEqual(payloads.map((row) => row.payload));
    expect(await outboxState(db.pool)).toEqual(ids.map((id) => ({ id, sent: true, attempts: 1, lastError: null })));

    expect(await dispatcher.dispatchBatch()).toMatchObject({ claimed: 0, sent: [] });
    expect(await target.storedMessages()).toHaveLength(3);
  });

  it('row 12: a crash after publishing and before marking sent publishes the event twice; the receipts consumer applies it once', async () => {
    const duplicateWindowMs = 1_000;
    const target = await useStream({ duplicateWindowMs });
    const [id] = await paidOrdersInOutbox(db.pool, 1);
    const crashing = dispatcherOn(target, {
      afterPublish: () => {
        throw new InjectedCrash('dispatcher died after the broker acked');
      },
    });

    await expect(crashing.dispatchBatch()).rejects.toBeInstanceOf(InjectedCrash);
    // The crash rolled the batch back: published, but neither sent nor even counted as tried.
    expect(await outboxState(db.pool)).toEqual([{ id, sent: false, attempts: 0, lastError: null }]);
    expect(await target.storedMessages()).toHaveLength(1);

    // Past the broker's duplicate window, JetStream stores the republish as a new message.
    await sleep(duplicateWindowMs * 2.5);
    const restarted = await dispatcherOn(target).dispatchBatch();
    expect(restarted).toMatchObject({ sent: [id], duplicates: [] });
    const stored = await target.storedMessages();
    expect(stored.map((message) => message.msgId)).toEqual([String(id), String(id)]);

    const config = { stream: target.stream, durable: 'receipts', subjectPrefix: target.subjectPrefix };
    await ensureReceiptsConsumer(target.nc, config);
    const stop = new AbortController();
    const running = createReceiptsConsumer({ ...config, db: db.servicePool('receipts'), nc: target.nc, logger }).run(stop.signal);
    try {
      // Both copies delivered and acknowledged...
      await eventually('both copies acked', async () => {
        const info = await target.jsm.consumers.info(target.stream, 'receipts');
        return info.ack_floor.stream_seq === 2 && info.num_pending === 0 && info.num_ack_pending === 0 ? info : undefined;
      });
    } finally {
      stop.abort();
      await running;
    }
    // ...and applied once.
    const { rows: receipts } = await db.pool.query('select message_id, event_type from receipts');
    expect(receipts).toEqual([{ message_id: String(id), event_type: 'order.paid' }]);
    const { rows: inbox } = await db.pool.query('select subscriber_id, message_id from processed_messages');
    expect(inbox).toEqual([{ subscriber_id: 'receipts', message_id: String(id) }]);
  });

  it('a crash inside the duplicate window: the broker drops the republish and the row is marked sent', async () => {
    const target = await useStream({ duplicateWindowMs: 120_000 });
    const [id] = await paidOrdersInOutbox(db.pool, 1);
    await expect(
      dispatcherOn(target, {
        afterPublish: () => {
          throw new InjectedCrash('dispatcher died after the broker acked');
        },
      }).dispatchBatch(),
    ).rejects.toBeInstanceOf(InjectedCrash);

    const outcome = await dispatcherOn(target).dispatchBatch();

    expect(outcome).toMatchObject({ sent: [id], duplicates: [id] });
    expect((await target.storedMessages()).map((message) => message.msgId)).toEqual([String(id)]);
    expect(await outboxState(db.pool)).toEqual([{ id, sent: true, attempts: 1, lastError: null }]);
  });

  it('two dispatchers at once: a row locked by one is skipped by the other, and no row is published twice', async () => {
    const target = await useStream();
    const ids = await paidOrdersInOutbox(db.pool, 6);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding: () => void = () => undefined;
    const firstHoldsItsRows = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const first = dispatcherOn(target, {
      batchSize: 3,
      afterPublish: async () => {
        holding();
        await gate;
      },
    }).dispatchBatch();
    await firstHoldsItsRows;

    // The first dispatcher holds rows 1-3 locked mid-batch; the second neither waits nor takes them.
    const second = await dispatcherOn(target, { batchSize: 10 }).dispatchBatch();
    expect(second).toMatchObject({ claimed: 3, sent: ids.slice(3), duplicates: [] });
    release();
    expect(await first).toMatchObject({ claimed: 3, sent: ids.slice(0, 3), duplicates: [] });

    // Free-running: two dispatchers drain a larger outbox together.
    const more = await paidOrdersInOutbox(db.pool, 40);
    const publishedBy: [number[], number[]] = [[], []];
    const duplicates: number[] = [];
    const recordInto = (list: number[]) => (row: OutboxRow, ack: PubAck) => {
      list.push(row.id);
      if (ack.duplicate) duplicates.push(row.id);
    };
    const stop = new AbortController();
    const runs = [
      dispatcherOn(target, { batchSize: 4, idleDelayMs: 20, afterPublish: recordInto(publishedBy[0]) }).run(stop.signal),
      dispatcherOn(target, { batchSize: 4, idleDelayMs: 20, afterPublish: recordInto(publishedBy[1]) }).run(stop.signal),
    ];
    try {
      await eventually('every row sent', async () => ((await outboxState(db.pool)).every((row) => row.sent) ? true : undefined));
    } finally {
      stop.abort();
      await Promise.all(runs);
    }
    const all = [...publishedBy[0], ...publishedBy[1]].sort((a, b) => a - b);
    expect(all).toEqual(more);
    expect(duplicates).toEqual([]);
    const stored = await target.storedMessages();
    expect(new Set(stored.map((message) => message.msgId)).size).toBe(stored.length);
    expect(stored).toHaveLength(ids.length + more.length);
  });

  it('the broker is down: rows wait, counting attempts with the last error, and flow once it is back; none is lost', async () => {
    const broker = await startOwnNatsServer();
    try {
      const target = await useStream({ url: broker.url });
      const stop = new AbortController();
      const running = dispatcherOn(target, {
        publishTimeoutMs: 500,
        idleDelayMs: 20,
        backoff: { initialMs: 100, maxMs: 400 },
      }).run(stop.signal);
      try {
        const before = await paidOrdersInOutbox(db.pool, 3);
        await eventually('rows sent before the outage', async () =>
          (await outboxState(db.pool)).every((row) => row.sent) ? true : undefined,
        );

        await broker.kill();
        const during = await paidOrdersInOutbox(db.pool, 5);
        const waiting = await eventually('the dispatcher to retry the first waiting row', async () => {
          const state = await outboxState(db.pool);
          const head = state.find((row) => row.id === during[0]);
          return head && head.attempts >= 2 ? state : undefined;
        });
        const waitingRows = waiting.filter((row) => during.includes(row.id));
        expect(waitingRows.every((row) => !row.sent)).toBe(true);
        expect(waitingRows[0]?.lastError).toBeTruthy();

        await broker.start();
        await eventually('rows sent after the outage', async () =>
          (await outboxState(db.pool)).every((row) => row.sent) ? true : undefined,
        );

        const stored = await target.storedMessages();
        expect(stored.map((message) => message.msgId).sort()).toEqual([...before, ...during].map(String).sort());
        expect((await outboxState(db.pool)).every((row) => row.lastError === null)).toBe(true);
      } finally {
        stop.abort();
        await running;
      }
    } finally {
      await stream?.close();
      stream = null;
      await broker.dispose();
    }
  });
});
