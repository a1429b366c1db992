// Proves the outbox dispatcher's and the receipts consumer's metrics: the lag gauge rises and falls
// with a NATS outage, and each process serves its counts on its own METRICS_PORT.
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboxDispatcher } from '../../src/messaging/outbox/dispatcher.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { createOutboxMetrics } from '../../src/platform/telemetry/messaging-metrics.js';
import { startMetricsServer } from '../../src/platform/telemetry/metrics-server.js';
import { sampleSum, scrape } from '../support/prometheus-text.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestStream, eventually, startOwnNatsServer, TEST_NATS_URL } from '../support/nats.js';
import { outboxState, paidOrdersInOutbox } from '../support/outbox-orders.js';
import { startServiceProcess, stopServiceProcesses } from '../support/service-process.js';

/**
 * The outbox dispatcher's and the receipts consumer's metrics (issue 15): the outbox's lag, read
 * from the table at each scrape, and what was published, redelivered, applied and ignored.
 */
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await stopServiceProcesses();
  await db.drop();
});

describe('outbox metrics', () => {
  it('the lag gauge rises while NATS is down and falls to 0 after it comes back; publishes and failures are counted', async () => {
    await db.pool.query('truncate outbox, processed_messages, receipts');
    const broker = await startOwnNatsServer();
    const stream = await createTestStream({ url: broker.url });
    const metrics = createOutboxMetrics(db.pool, new Registry(), { processMetrics: false });
    const server = await startMetricsServer(metrics.registry, { port: 0 });
    const read = async () => {
      const text = await scrape(server.url);
      return {
        lag: sampleSum(text, 'order_payments_outbox_lag_seconds'),
        unsent: sampleSum(text, 'order_payments_outbox_unsent_rows'),
        published: sampleSum(text, 'order_payments_outbox_published_total'),
        failures: sampleSum(text, 'order_payments_outbox_publish_failures_total'),
      };
    };
    const stop = new AbortController();
    const running = createOutboxDispatcher({
      db: db.pool,
      js: stream.js,
      subjectPrefix: stream.subjectPrefix,
      logger: pino({ level: 'silent' }),
      publishTimeoutMs: 500,
      idleDelayMs: 20,
      backoff: { initialMs: 100, maxMs: 400 },
      metrics,
    }).run(stop.signal);
    try {
      await paidOrdersInOutbox(db.pool, 3);
      await eventually('3 published, nothing behind', async () => {
        const now = await read();
        return now.published === 3 && now.lag === 0 && now.unsent === 0 ? now : undefined;
      });

      await broker.kill();
      await paidOrdersInOutbox(db.pool, 2);
      const first = await eventually('the lag to show', async () => {
        const now = await read();
        return now.lag > 0 && now.failures >= 1 ? now : undefined;
      });
      expect(first.unsent).toBe(2);
      await sleep(1_200);
      const later = await read();
      expect(later.lag).toBeGreaterThan(first.lag + 1);
      expect(later.published).toBe(3);

      await broker.start();
      const after = await eventually('the outbox drained after the outage', async () => {
        const now = await read();
        return now.lag === 0 && now.unsent === 0 ? now : undefined;
      });
      expect(after.published).toBe(5);
      expect((await outboxState(db.pool)).every((row) => row.sent)).toBe(true);
    } finally {
      stop.abort();
      await running;
      await server.close();
      await stream.close();
      await broker.dispose();
    }
  }, 90_000);

  it('each process serves its own METRICS_PORT: the dispatcher its published rows and lag, the receipts consumer applied and duplicates ignored', async () => {
    await db.pool.query('truncate outbox, processed_messages, receipts');
    const stream = await createTestStream({ duplicateWindowMs: 1_000 });
    const [dispatcherPort, receiptsPort] = [await findFreePort(), await findFreePort()];
    const env = (metricsPort: number) => ({
      DATABASE_URL: db.url,
      NATS_URL: TEST_NATS_URL,
      OUTBOX_STREAM: stream.stream,
      OUTBOX_SUBJECT_PREFIX: stream.subjectPrefix,
      OUTBOX_DUPLICATE_WINDOW_MS: '1000',
      OUTBOX_POLL_INTERVAL_MS: '50',
      METRICS_PORT: String(metricsPort),
    });
    try {
      const ids = await paidOrdersInOutbox(db.pool, 2);
      const dispatcher = startServiceProcess('src/outbox-dispatcher.ts', { ...env(dispatcherPort), DATABASE_URL: db.serviceUrl('outbox') });
      const dispatcherMetrics = await eventually(
        'the dispatcher to publish both rows',
        async () => {
          const text = await scrape(`http://127.0.0.1:${dispatcherPort}/metrics`).catch(() => '');
          return sampleSum(text, 'order_payments_outbox_published_total') === 2 ? text : undefined;
        },
        45_000,
      );
      expect(sampleSum(dispatcherMetrics, 'order_payments_outbox_lag_seconds')).toBe(0);
      expect(sampleSum(dispatcherMetrics, 'order_payments_outbox_unsent_rows')).toBe(0);
      expect(dispatcherMetrics).toContain('order_payments_outbox_process_cpu_seconds_total');
      await dispatcher.stop();

      // One event out twice, past the broker's duplicate window: what a crash between publish and commit does.
      const [stored] = await stream.storedMessages();
      if (!stored) throw new Error('nothing stored');
      await sleep(2_500);
      await stream.js.publish(stored.subject, JSON.stringify(stored.data), { msgID: stored.msgId ?? '' });

      const receipts = startServiceProcess('src/receipts.ts', { ...env(receiptsPort), DATABASE_URL: db.serviceUrl('receipts') });
      const receiptsMetrics = await eventually(
        'the receipts consumer to handle all three messages',
        async () => {
          const text = await scrape(`http://127.0.0.1:${receiptsPort}/metrics`).catch(() => '');
          return sampleSum(text, 'order_payments_receipts_messages_total') === 3 ? text : undefined;
        },
        45_000,
      );
      expect(sampleSum(receiptsMetrics, 'order_payments_receipts_messages_total', { outcome: 'applied', event_type: 'order.paid' })).toBe(2);
      expect(sampleSum(receiptsMetrics, 'order_payments_receipts_messages_total', { outcome: 'duplicate', event_type: 'order.paid' })).toBe(1);
      expect(sampleSum(receiptsMetrics, 'order_payments_receipts_redeliveries_total')).toBe(0);
      for (const id of ids) expect(receiptsMetrics).not.toContain(`"${id}"`);
      await receipts.stop();
    } finally {
      await stream.close();
    }
  }, 120_000);
});
