// Failure-matrix rows 4, 5, 15, 17 and 21 on the forward path: a worker killed inside a step after
// its side effect; the retry, or a cancel before it, leaves each effect exactly once.
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { FailpointName } from '../../src/platform/failpoint.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { workerDeploymentOptions } from '../../src/platform/temporal/worker-deployment.js';
import { workflowSpanSinks } from '../../src/platform/temporal/order-worker.js';
import { CRASH_TEST_TIMEOUT_MS, crashThenRecover, type CrashRun } from '../support/crash-recovery.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { stripeWritesByStep } from '../support/stripe-writes.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';
import { withTimeout } from '../support/with-timeout.js';
import { endingOf } from '../support/workflow-ending.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Rows 4, 5 and 15 on the forward path: the worker process SIGKILLs itself inside the
 * reservation, the authorization or the capture, after its side effect and before it reports
 * completion; a fresh worker process picks up Temporal's retry once the dead worker's heartbeats
 * stop. Each test has its own database, emulator and task queue, so the tests wait out their
 * heartbeat timeouts side by side.
 */
const harnesses: SagaHarness[] = [];
afterAll(async () => {
  await stopWorkerProcesses();
  await Promise.all(harnesses.map((harness) => harness.close()));
});

const STOCKED = 10;
const QUANTITY = 3;

async function crashDuringOrder(failpoint: FailpointName): Promise<{ harness: SagaHarness; run: CrashRun & { result: { paymentIntentId: string | null } } }> {
  const harness = await startSagaHarness({ worker: false });
  harnesses.push(harness);
  const order: OrderInput = await harness.newOrder({ quantity: QUANTITY });
  const run = await crashThenRecover(harness, order, failpoint);
  if (run.ending.ended !== 'returned') throw new Error(`the run ended ${run.ending.ended}; it should have completed`);
  expect(run.ending.result).toMatchObject({ status: 'completed', orderId: order.orderId, refundId: null });
  return { harness, run: { ...run, result: run.ending.result } };
}

/** One hold, captured once and booked once, stock taken once, the order completed: whatever the crash interrupted. */
async function expectCompletedOnce(harness: SagaHarness, order: OrderInput, paymentIntentId: string | null, originalRunId: string) {
  expect(paymentIntentId).toMatch(/^pi_/);
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.intents.map((intent) => [intent.id, intent.status, intent.amount_received])).toEqual([[paymentIntentId, 'succeeded', order.amount]]);
  expect(stripe.succeeded[0]?.metadata).toMatchObject({ run_id: originalRunId, activity_id: ActivityId.authorizePayment });
  expect(stripe.refunds).toEqual([]);
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
    { kind: 'charge', amount_minor: order.amount, stripe_object_id: paymentIntentId },
  ]);
  expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ payment_intent_id: paymentIntentId, state: 'captured', amount_captured: order.amount });
  expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'allocated' }]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED - QUANTITY);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: paymentIntentId });
  await harness.expectInvariants([order.orderId]);
}

/**
 * Cancels the run whose worker died inside `activityId`, and waits until the cancel has ended that
 * activity (in the history: timed out with its retry stopped, or cancelled), before any worker
 * could run its retry: a worker with no activities takes the cancel to it. A retry that ran first
 * would report the step done and the test would not be about a step the run never heard from.
 */
async function cancelBeforeRetry(harness: SagaHarness, handle: WorkflowHandle, activityId: string): Promise<void> {
  await handle.cancel();
  const connection = await NativeConnection.connect({ address: harness.temporalAddress });
  const workflowsOnly = await Worker.create({
    connection,
    taskQueue: harness.taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    // The harness's build: the cancelled run is pinned to it.
    workerDeploymentOptions: workerDeploymentOptions(harness.deployment),
    dataConverter: harness.dataConverter,
    sinks: workflowSpanSinks(null),
  });
  const polling = workflowsOnly.run();
  try {
    await vi.waitFor(
      async () => {
        expect(['timed-out', 'cancelled']).toContain((await SagaHistory.of(handle)).activityEnding(activityId));
      },
      { timeout: 60_000, interval: 500 },
    );
  } finally {
    workflowsOnly.shutdown();
    await polling;
    await connection.close();
  }
}

/**
 * A worker that dies at `failpoint` inside `activityId`, after its commit (the order then stands
 * at `status`); the run cancelled before any retry, then finished by a fresh worker: it must end
 * cancelled.
 */
async function crashThenCancel(failpoint: FailpointName, activityId: string, status: string) {
  const harness = await startSagaHarness({ worker: false });
  harnesses.push(harness);
  const order: OrderInput = await harness.newOrder({ quantity: QUANTITY });
  const doomed = await startWorkerProcess(harness, { failpoints: [failpoint] });
  const started = await harness.start(order);
  expect(await doomed.waitForExit(120_000)).toEqual({ code: null, signal: 'SIGKILL' });
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status });
  await cancelBeforeRetry(harness, started.handle, activityId);
  await startWorkerProcess(harness);
  const ending = await withTimeout(endingOf(started.handle), 150_000, () => 'the cancelled run did not end');
  expect(ending.ended).toBe('cancelled');
  return { harness, order, started };
}

describe.concurrent('failure matrix rows 4, 5 and 15: the worker is killed inside a forward step', () => {
  it(
    'rows 4 and 17: worker killed after the order was recorded, and the order cancelled before any retry: the record that landed is closed compensated; nothing reserved, held or charged',
    async () => {
      // The record landed; its attempt will never report. The customer cancels now.
      const { harness, order } = await crashThenCancel('record-order.after-commit', ActivityId.recordOrder, 'pending');
      expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', status_reason: 'cancelled' });
      expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([]);
      expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
      expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toEqual([]);
      await harness.expectInvariants([order.orderId]);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 25: worker killed after the confirmation committed, and the order cancelled before any retry: the order stays confirmed with its capture and its stock; nothing refunded, voided or released',
    async () => {
      // The confirmation landed; its attempt will never report. The cancel stops its retry, so the
      // run never hears that the order is confirmed.
      const { harness, order, started } = await crashThenCancel('confirm.after-commit', ActivityId.confirmOrder, 'completed');

      const history = await SagaHistory.of(started.handle);
      // Began compensating, found the order confirmed, and undid nothing.
      expect(history.activityEnding(ActivityId.markCompensating)).toBe('completed');
      for (const undo of [ActivityId.refundCapture, ActivityId.voidAuthorization, ActivityId.releaseStock]) {
        expect(() => history.activityEnding(undo), undo).toThrow(/expected one scheduled/);
      }
      const paymentIntentId = (await orderRow(harness.db.pool, order.orderId))?.payment_intent_id ?? null;
      await expectCompletedOnce(harness, order, paymentIntentId, started.runId);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 15: worker killed after Stripe captured, before the capture was recorded: the retry replays under the same key, one capture, booked once',
    async () => {
      const { harness, run } = await crashDuringOrder('capture.after-stripe');

      const history = await SagaHistory.of(run.handle);
      expect(history.completedAttempt(ActivityId.capturePayment)).toBe(2);
      // Temporal gave up on the dead worker's attempt when its heartbeats stopped.
      expect(history.previousAttemptEnding(ActivityId.capturePayment)).toBe('HEARTBEAT');
      // One hold and one capture executed; the capture re-sent under its key and replayed.
      const writes = stripeWritesByStep(harness, run.runId, [ActivityId.authorizePayment, ActivityId.capturePayment]);
      expect(writes[ActivityId.authorizePayment].executed).toBe(1);
      expect(writes[ActivityId.capturePayment].executed).toBe(1);
      expect(writes[ActivityId.capturePayment].replayed).toBeGreaterThanOrEqual(1);
      const captureKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.capturePayment });
      expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectCompletedOnce(harness, run.order, run.result.paymentIntentId, run.runId);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 4: worker killed after the capture and its ledger charge committed, before completing: the retry is answered from Postgres, one ledger transaction',
    async () => {
      const { harness, run } = await crashDuringOrder('capture.after-ledger');

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.capturePayment)).toBe(2);
      // The retry found its key completed and never called Stripe: one capture request in all.
      const writes = stripeWritesByStep(harness, run.runId, [ActivityId.authorizePayment, ActivityId.capturePayment]);
      expect(writes[ActivityId.authorizePayment].executed).toBe(1);
      expect(writes[ActivityId.capturePayment]).toEqual({ requests: 1, executed: 1, replayed: 0 });
      const captureKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.capturePayment });
      expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectCompletedOnce(harness, run.order, run.result.paymentIntentId, run.runId);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 5: worker killed after Stripe placed the hold, before recording it: the retry replays under the same key, one hold',
    async () => {
      const { harness, run } = await crashDuringOrder('authorize.after-stripe');

      const history = await SagaHistory.of(run.handle);
      expect(history.completedAttempt(ActivityId.authorizePayment)).toBe(2);
      expect(history.previousAttemptEnding(ActivityId.authorizePayment)).toBe('HEARTBEAT');
      // The authorization, its replay under the same key, and the capture.
      const writes = stripeWritesByStep(harness, run.runId, [ActivityId.authorizePayment, ActivityId.capturePayment]);
      expect(writes[ActivityId.authorizePayment].executed).toBe(1);
      expect(writes[ActivityId.authorizePayment].replayed).toBeGreaterThanOrEqual(1);
      expect(writes[ActivityId.capturePayment].executed).toBe(1);
      const authorizationKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.authorizePayment });
      expect(await keyRecord(harness.db.pool, 'stripe.authorize', authorizationKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectCompletedOnce(harness, run.order, run.result.paymentIntentId, run.runId);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 4: worker killed after the reservation committed, before completing: the retry reserves nothing more, stock taken once',
    async () => {
      const { harness, run } = await crashDuringOrder('reserve.after-commit');

      const history = await SagaHistory.of(run.handle);
      expect(history.completedAttempt(ActivityId.reserveStock)).toBe(2);
      expect(history.previousAttemptEnding(ActivityId.reserveStock)).toBe('HEARTBEAT');
      // The reservation's retry sent nothing to Stripe: one hold and one capture executed, and
      // every write carried one of their keys.
      const writes = stripeWritesByStep(harness, run.runId, [ActivityId.authorizePayment, ActivityId.capturePayment]);
      expect(writes[ActivityId.authorizePayment].executed).toBe(1);
      expect(writes[ActivityId.capturePayment].executed).toBe(1);
      await expectCompletedOnce(harness, run.order, run.result.paymentIntentId, run.runId);
    },
    CRASH_TEST_TIMEOUT_MS,
  );
});
