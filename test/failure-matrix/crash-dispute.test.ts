// Failure-matrix row 22, the crash: the worker is SIGKILLed right after a dispute's booking
// committed, before it reported the activity; a fresh worker process retries it, and the
// dispute's money is booked once. Real worker processes, Temporal, PostgreSQL and the emulator.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DisputeSettings } from '../../src/platform/config/settings.js';
import { disputeWorkflowId } from '../../src/workflows/dispute-messages.js';
import { CRASH_TEST_TIMEOUT_MS } from '../support/crash-recovery.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';
import { outboxEvents } from '../support/order-state.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startApi, WEBHOOK_SECRET, type RunningApi } from '../support/webhooks.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';

const settings: DisputeSettings = { deadlinePolicy: 'accept', reminderLeadMs: 48 * 3600_000, policyLeadMs: 2 * 3600_000, resyncMs: 6 * 3600_000 };

let h: SagaHarness;
let orders: OrdersApi;
let webhooks: RunningApi;

beforeAll(async () => {
  h = await startSagaHarness({ worker: false });
  orders = await startOrdersApi(h);
  webhooks = await startApi({ db: h.db.pool, client: h.client, disputes: { taskQueue: h.taskQueue, settings }, handoff: { attempts: 5, retryMs: 100 } });
  h.emulator.addWebhookEndpoint({ url: webhooks.webhookUrl, secret: WEBHOOK_SECRET });
  h.emulator.configureWebhookDelivery({ retryInitialMs: 50 });
});
afterAll(async () => {
  await stopWorkerProcesses();
  await webhooks.close();
  await orders.app.close();
  await h.close();
});

describe('failure matrix: a worker killed in the middle of a dispute', () => {
  it(
    'row 22: worker killed after the withdrawal and fee committed, before reporting: a fresh worker retries, one set of dispute entries, announced once',
    async () => {
      const crashing = await startWorkerProcess(h, { failpoints: ['dispute.after-booking'] });
      const tenant = await orders.keyFor('crash-dispute');
      const created = await orders.post({ apiKey: tenant, idempotencyKey: `idem-${randomUUID()}`, body: await orders.orderBody({ paymentMethod: 'pm_card_createDispute' }) });
      const orderId = created.body.id as string;
      const exit = await crashing.waitForExit(90_000);
      expect(exit.signal).toBe('SIGKILL');

      await startWorkerProcess(h);
      await h.client.workflow.getHandle(`order-payment-${orderId}`).result();
      const { rows: disputes } = await h.db.pool.query<{ dispute_id: string }>('select dispute_id from disputes where order_id = $1', [orderId]);
      const disputeId = disputes[0]?.dispute_id as string;
      expect(disputeId).toMatch(/^dp_/);
      // The killed attempt of the first read timed out on its heartbeat; a later attempt completed.
      await vi.waitFor(
        async () => {
          const { events } = await h.client.workflow.getHandle(disputeWorkflowId(disputeId)).fetchHistory();
          const started = (events ?? []).flatMap((event) => (event.activityTaskStartedEventAttributes ? [event.activityTaskStartedEventAttributes.attempt ?? 0] : []));
          expect(Math.max(...started)).toBeGreaterThan(1);
          expect((events ?? []).some((event) => event.activityTaskCompletedEventAttributes)).toBe(true);
        },
        { timeout: 60_000, interval: 500 },
      );
      const { rows } = await h.db.pool.query<{ kind: string; amount_minor: number }>(
        "select kind, amount_minor from ledger_transactions where order_id = $1 and kind like 'dispute_%' order by id",
        [orderId],
      );
      expect(rows.map((row) => [row.kind, row.amount_minor])).toEqual([
        ['dispute_withdrawal', 4200],
        ['dispute_fee', 1500],
      ]);
      expect((await outboxEvents(h.db.pool, orderId)).filter((row) => row.event_type === 'order.disputed')).toHaveLength(1);
      await h.expectInvariants([orderId]);
    },
    CRASH_TEST_TIMEOUT_MS,
  );
});
