// Proves an execution started on the old charge-first shape finishes on it after the workers are
// upgraded: completed or compensated with the same activities and keys, and no hold.
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { ChargeFirstActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { heartbeatWhileRunning } from '../../src/platform/temporal/heartbeat-interceptor.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Executions that started on the charge-first shape must finish on it. A worker running the
 * workflow code from before the change starts an order and charges it; its stock allocation is
 * held back until the worker is gone; then the current worker, with the `hold-then-capture`
 * patch, takes over the execution mid-flight. It replays the history without the patch marker,
 * so it stays on the charge-first branch: the same activity types and IDs, the same keys.
 */
const CHARGE_FIRST_WORKFLOWS = fileURLToPath(new URL('../fixtures/workflows/charge-first-worker.ts', import.meta.url));

let harness: SagaHarness;
let chargeFirstBundle: string;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  ({ code: chargeFirstBundle } = await bundleWorkflowCode({ workflowsPath: CHARGE_FIRST_WORKFLOWS, logger: new DefaultLogger('WARN') }));
  // Allocations wait while this flag is up: the old worker charges, but cannot get further.
  await harness.db.pool.query(`
    create table hold_allocations (held boolean not null);
    insert into hold_allocations values (true);
    create function hold_allocation() returns trigger language plpgsql as $$
    begin
      if (select held from hold_allocations) then raise exception 'upgrade test: allocation held back'; end if;
      return new;
    end $$;
    create trigger hold_allocation before insert on stock_allocations for each row execute function hold_allocation();`);
}, 180_000);
afterAll(() => harness.close());

/** Starts the order on a worker with the old code, waits until it has charged, and stops that worker. */
async function chargeOnTheOldWorker(order: OrderInput) {
  await harness.db.pool.query('update hold_allocations set held = true');
  const connection = await NativeConnection.connect({ address: harness.temporalAddress });
  const oldWorker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: harness.taskQueue,
    workflowBundle: { code: chargeFirstBundle },
    activities: createActivities({ db: harness.db.pool, stripe: harness.stripe }),
    interceptors: { activity: [heartbeatWhileRunning] },
  });
  const running = oldWorker.run();
  const started = await harness.start(order);
  const chargeKey = `${started.runId}/${ChargeFirstActivityId.chargePayment}`;
  await vi.waitFor(async () => {
    expect(await keyRecord(harness.db.pool, 'stripe.charge', chargeKey)).toMatchObject({ state: 'completed' });
    const { raw } = await started.handle.describe();
    expect(raw.pendingActivities?.some((activity) => activity.activityId === ChargeFirstActivityId.allocateStock && (activity.attempt ?? 0) > 1)).toBe(true);
  }, { timeout: 60_000, interval: 200 });
  oldWorker.shutdown();
  await running;
  await connection.close();
  await harness.db.pool.query('update hold_allocations set held = false');
  return started;
}

describe('an execution in flight on the charge-first shape when the workers are upgraded', () => {
  it('finishes on the charge-first shape under the current worker: charged once, allocated, completed, no hold', async () => {
    const order = await harness.newOrder({ quantity: 2 });
    const started = await chargeOnTheOldWorker(order);

    await harness.startWorker();
    try {
      const result = await started.handle.result();
      expect(result).toMatchObject({ status: 'completed', refundId: null });
      const history = await SagaHistory.of(started.handle);
      expect(history.events.some((event) => event.markerRecordedEventAttributes)).toBe(false);
      expect(history.completedAttempt(ChargeFirstActivityId.chargePayment)).toBe(1);
      history.scheduled(ChargeFirstActivityId.allocateStock);
      const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
      // An automatic capture: the charge-first shape never held.
      expect(stripe.intents.map((intent) => [intent.capture_method, intent.status, intent.amount_received])).toEqual([['automatic', 'succeeded', order.amount]]);
      expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([{ kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId }]);
      expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: 2, state: 'allocated' }]);
      expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'completed' });
      await harness.expectInvariants([order.orderId]);
    } finally {
      await harness.stopWorker();
    }
  });

  it('compensates on the charge-first shape under the current worker: the stock runs out after the charge, which is refunded once', async () => {
    const order = await harness.newOrder({ quantity: 3 });
    const started = await chargeOnTheOldWorker(order);
    // While the workers were being replaced, the stock was sold elsewhere.
    await harness.db.pool.query('update inventory set available = 1 where sku = $1', [order.sku]);

    await harness.startWorker();
    try {
      const result = await started.handle.result();
      expect(result.status).toBe('compensated');
      expect(result.reason).toContain('OutOfStock');
      const history = await SagaHistory.of(started.handle);
      history.scheduled(ChargeFirstActivityId.refundPayment);
      history.scheduled(ChargeFirstActivityId.recordRefund);
      const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
      expect(stripe.succeeded).toHaveLength(1);
      expect(stripe.refunds.map((refund) => [refund.amount, refund.metadata?.activity_id])).toEqual([[order.amount, ChargeFirstActivityId.refundPayment]]);
      expect(await availableStock(harness.db.pool, order.sku)).toBe(1);
      expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', refund_id: result.refundId });
      await harness.expectInvariants([order.orderId]);
    } finally {
      await harness.stopWorker();
    }
  });
});
