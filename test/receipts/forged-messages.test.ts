// NATS with credentials: on a broker configured as the stack configures its own, the outbox
// dispatcher's order events are applied, and a forged orders.order.paid is not: not from a client
// without a key (refused at the door), not from the receipts consumer's own key (it may not publish
// order events), not from a user of another account (its subjects are not the ORDERS account's).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { jetstream, jetstreamManager, PubHeaders } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/messaging/nats/nats-connection.js';
import { ensureNatsUserKeys, ordersBrokerConfig, type NatsUserKeys } from '../../src/messaging/nats/nats-credentials.js';
import { ensureOrderEventsStream } from '../../src/messaging/nats/order-events-stream.js';
import type { OrderEvent } from '../../src/messaging/order-event.js';
import { createOutboxDispatcher } from '../../src/messaging/outbox/dispatcher.js';
import { createReceiptsConsumer, ensureReceiptsConsumer } from '../../src/messaging/receipts/consumer.js';
import { spawnManaged, type ManagedProcess } from '../../src/operations/stack/child-process.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { ensureNatsServer } from '../../src/platform/tools/bootstrap.js';
import { writePrivateFile } from '../../src/platform/tools/private-files.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/nats.js';
import { paidOrdersInOutbox } from '../support/outbox-orders.js';

const logger = pino({ level: 'silent' });
const BROKER = { stream: 'ORDERS', subjectPrefix: 'orders', durable: 'receipts', duplicateWindowMs: 120_000 };
const STRANGER = { user: 'stranger', password: 'a-password-of-another-account' };

let dir: string;
let db: TestDatabase;
let server: ManagedProcess;
let url: string;
let keys: NatsUserKeys;
const connections: NatsConnection[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'forged-nats-'));
  db = await createTestDatabase();
  const port = await findFreePort();
  url = `nats://127.0.0.1:${port}`;
  keys = await ensureNatsUserKeys(path.join(dir, 'credentials'));
  // The stack's configuration, and one more account, as a shared broker would have for other teams.
  const config = ordersBrokerConfig({ host: '127.0.0.1', port, storeDir: path.join(dir, 'store'), ...BROKER, keys }).replace(
    /\n}\n$/,
    `\n  STRANGER: { jetstream: enabled, users: [ { user: "${STRANGER.user}", password: "${STRANGER.password}" } ] }\n}\n`,
  );
  const configFile = path.join(dir, 'credentials', 'nats-server.conf');
  await writePrivateFile(configFile, config);
  server = spawnManaged({ name: 'nats-server', file: await ensureNatsServer(() => undefined), args: ['-c', configFile], logFile: path.join(dir, 'nats.log') });
  await eventually('the broker to answer the dispatcher', async () => {
    try {
      connections.push(await connectNats({ url, name: 'probe', seedFile: keys['outbox-dispatcher'].seedFile }));
      return true;
    } catch {
      return undefined;
    }
  }, 20_000);
});
afterAll(async () => {
  for (const nc of connections) await nc.close().catch(() => undefined);
  await server.stop();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

async function as(seedFile: string, name: string): Promise<NatsConnection> {
  const nc = await connectNats({ url, name, seedFile });
  connections.push(nc);
  return nc;
}

const forgery = (orderId: string): OrderEvent => ({
  event_type: 'order.paid',
  order_id: orderId,
  status: 'paid',
  amount_minor: 99_999,
  currency: 'usd',
  payment_intent_id: 'pi_forged',
  refund_id: null,
  reason: null,
  occurred_at: new Date().toISOString(),
});

describe('a forged order event on a broker with credentials', () => {
  it('is never applied: the dispatcher’s event is, and the stream holds nothing else', async () => {
    const dispatcherNc = await as(keys['outbox-dispatcher'].seedFile, 'outbox-dispatcher');
    const receiptsNc = await as(keys.receipts.seedFile, 'receipts');
    await ensureOrderEventsStream(dispatcherNc, BROKER);
    await ensureReceiptsConsumer(receiptsNc, BROKER);
    const stop = new AbortController();
    const consuming = createReceiptsConsumer({ ...BROKER, db: db.servicePool('receipts'), nc: receiptsNc, logger, retryDelayMs: 200 }).run(stop.signal);
    try {
      // The genuine event: the outbox row, published by the dispatcher with its key.
      const [id] = await paidOrdersInOutbox(db.pool, 1);
      const dispatcher = createOutboxDispatcher({ db: db.servicePool('outbox'), js: jetstream(dispatcherNc), subjectPrefix: BROKER.subjectPrefix, logger });
      expect((await dispatcher.dispatchBatch()).sent).toEqual([id]);

      // 1. No key: the broker refuses the connection itself.
      await expect(connect({ servers: url, name: 'anonymous', reconnect: false })).rejects.toThrow(/Authorization Violation/i);

      // 2. The receipts consumer's own key: publishing an order event is not among its permissions.
      const forgedHeaders = headers();
      forgedHeaders.set(PubHeaders.MsgIdHdr, 'forged-by-receipts');
      await expect(jetstream(receiptsNc).publish('orders.order.paid', JSON.stringify(forgery('O-forged-1')), { headers: forgedHeaders, timeout: 1_500 })).rejects.toThrow();
      receiptsNc.publish('orders.order.paid', JSON.stringify(forgery('O-forged-2')), { headers: forgedHeaders });
      await receiptsNc.flush();

      // 3. A user of another account: its orders.order.paid is that account's subject, not ORDERS'.
      const stranger = await connect({ servers: url, name: 'stranger', user: STRANGER.user, pass: STRANGER.password, reconnect: false });
      connections.push(stranger);
      stranger.publish('orders.order.paid', JSON.stringify(forgery('O-forged-3')), { headers: forgedHeaders });
      await stranger.flush();

      await eventually('the genuine receipt', async () => {
        const { rows } = await db.pool.query<{ message_id: string }>('select message_id from receipts');
        return rows.length > 0 ? rows : undefined;
      });
      // Time for any forgery that got through to land; none may.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const { rows } = await db.pool.query<{ message_id: string; order_id: string }>('select message_id, order_id from receipts');
      expect(rows).toEqual([{ message_id: String(id), order_id: expect.stringMatching(/^O-/) as unknown }]);
      expect(rows.map((row) => row.order_id)).not.toContain('O-forged-1');
      const info = await (await jetstreamManager(dispatcherNc)).streams.info(BROKER.stream);
      expect(info.state.messages).toBe(1);
    } finally {
      stop.abort();
      await consuming;
    }
  });
});
