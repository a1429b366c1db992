// Failure-matrix row 12 with real processes: a dispatcher SIGKILLed between publishing and marking
// sent republishes on restart, and the receipts process applies the event once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestStream, eventually, TEST_NATS_URL, type TestStream } from '../support/nats.js';
import { outboxState, paidOrdersInOutbox } from '../support/outbox-orders.js';
import { startServiceProcess, stopServiceProcesses, type ServiceProcess } from '../support/service-process.js';

const DUPLICATE_WINDOW_MS = 1_000;
let db: TestDatabase;
let stream: TestStream;

beforeAll(async () => {
  db = await createTestDatabase();
  stream = await createTestStream({ duplicateWindowMs: DUPLICATE_WINDOW_MS });
});
afterAll(async () => {
  await stopServiceProcesses();
  await stream.close();
  await db.drop();
});

function serviceEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    NATS_URL: TEST_NATS_URL,
    OUTBOX_STREAM: stream.stream,
    OUTBOX_SUBJECT_PREFIX: stream.subjectPrefix,
    OUTBOX_DUPLICATE_WINDOW_MS: String(DUPLICATE_WINDOW_MS),
    OUTBOX_POLL_INTERVAL_MS: '50',
    ...extra,
  };
}

async function expectExit(service: ServiceProcess, expected: { code: number | null; signal: NodeJS.Signals | null }) {
  const exit = await Promise.race([service.exited, sleep(45_000).then(() => null)]);
  if (exit === null) throw new Error(`process did not exit:\n${service.output()}`);
  expect(exit, service.output()).toEqual(expected);
}

describe('outbox dispatcher process', () => {
  it('row 12: SIGKILLed after publishing and before marking sent, it republishes on restart; the receipts process applies the event once', async () => {
    const [id] = await paidOrdersInOutbox(db.pool, 1);

    const crashing = startServiceProcess('src/outbox-dispatcher.ts', serviceEnv({ DATABASE_URL: db.serviceUrl('outbox'), FAILPOINTS: 'outbox.after-publish' }));
    await expectExit(crashing, { code: null, signal: 'SIGKILL' });
    expect(await outboxState(db.pool)).toEqual([{ id, sent: false, attempts: 0, lastError: null }]);
    expect((await stream.storedMessages()).map((message) => message.msgId)).toEqual([String(id)]);

    // Past the broker's duplicate window the republish is stored again: the event is out twice.
    await sleep(DUPLICATE_WINDOW_MS * 2.5);
    const restarted = startServiceProcess('src/outbox-dispatcher.ts', serviceEnv({ DATABASE_URL: db.serviceUrl('outbox') }));
    await eventually('the row marked sent', async () => ((await outboxState(db.pool))[0]?.sent ? true : undefined));
    await restarted.stop();
    await expectExit(restarted, { code: 0, signal: null });
    expect((await stream.storedMessages()).map((message) => message.msgId)).toEqual([String(id), String(id)]);

    const receipts = startServiceProcess('src/receipts.ts', serviceEnv({ DATABASE_URL: db.serviceUrl('receipts') }));
    await eventually(
      'both copies delivered and acked',
      async () => {
        const info = await stream.jsm.consumers.info(stream.stream, 'receipts').catch(() => null);
        return info && info.ack_floor.stream_seq === 2 && info.num_ack_pending === 0 ? info : undefined;
      },
      45_000,
    );
    await receipts.stop();
    await expectExit(receipts, { code: 0, signal: null });

    const { rows } = await db.pool.query('select message_id, order_id, event_type from receipts');
    const { rows: order } = await db.pool.query<{ order_id: string }>('select order_id from outbox where id = $1', [id]);
    expect(rows).toEqual([{ message_id: String(id), order_id: order[0]?.order_id, event_type: 'order.paid' }]);
  }, 150_000);
});
