// Failure-matrix row 4 inside the compensations: a worker killed in the refund, the void or the
// stock release is replaced by a fresh one, and each undo happens exactly once.
import { failureMessage } from '../../src/platform/temporal/payload-encryption/data-converter.js';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { FailpointName } from '../../src/platform/failpoint.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { CRASH_TEST_TIMEOUT_MS, crashThenRecover, type CrashRun } from '../support/crash-recovery.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { stripeWritesByStep } from '../support/stripe-writes.js';
import { stopWorkerProcesses } from '../support/worker-process.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Row 4 inside the compensations, and a crash inside each compensation: the worker process
 * SIGKILLs itself in the refund, the void or the stock release, and a fresh worker process
 * finishes the undo. For the refund, the order is captured and then its confirmation is refused
 * (a trigger stands in for a database that will not take the write) and the order is cancelled;
 * for the void, the capture cannot get through and the order is cancelled with its hold in place.
 */
const harnesses: SagaHarness[] = [];
afterAll(async () => {
  await stopWorkerProcesses();
  await Promise.all(harnesses.map((harness) => harness.close()));
});

const STOCKED = 10;
const QUANTITY = 4;

/**
 * Makes PostgreSQL refuse to mark any order completed (the database is the test's own), so the
 * saga retries its confirmation until it is cancelled. Each refusal counts in a sequence, which
 * the refusal's rollback does not undo: the confirmation is a local activity, with no pending
 * activity to read its failures from.
 */
async function refuseCompletion(harness: SagaHarness): Promise<void> {
  await harness.db.pool.query(`
    create sequence refused_completion_attempts;
    grant usage on sequence refused_completion_attempts to order_payments_worker;
    create function refuse_completion() returns trigger language plpgsql as $$
    begin
      perform nextval('refused_completion_attempts');
      raise exception 'failure matrix: order % may not complete', new.order_id;
    end $$;
    create trigger refuse_completion before update of status on orders
      for each row when (new.status = 'completed') execute function refuse_completion();`);
}

/** Cancels the order once its confirmation has been refused at least once. */
function cancelOnceConfirmationRefused(harness: SagaHarness) {
  return async (handle: WorkflowHandle<typeof orderPaymentSaga>): Promise<void> => {
    await vi.waitFor(
      async () => {
        const { rows } = await harness.db.pool.query<{ is_called: boolean }>('select is_called from refused_completion_attempts');
        expect(rows[0]?.is_called).toBe(true);
      },
      { timeout: 120_000, interval: 250 },
    );
    await handle.cancel();
  };
}

/** Cancels the order once the named step has failed at least once. */
function cancelOnceFailing(activityId: string, message: string) {
  return async (handle: WorkflowHandle<typeof orderPaymentSaga>): Promise<void> => {
    await vi.waitFor(
      async () => {
        const { raw } = await handle.describe();
        const pending = raw.pendingActivities?.find((activity) => activity.activityId === activityId);
        expect(await failureMessage(handle.client.options.loadedDataConverter, pending?.lastFailure)).toContain(message);
      },
      { timeout: 120_000, interval: 250 },
    );
    await handle.cancel();
  };
}

/** Captured and reserved, not completed: every compensation has something to undo. */
async function crashWhileRefunding(failpoint: FailpointName): Promise<{ harness: SagaHarness; run: CrashRun }> {
  const harness = await startSagaHarness({ worker: false });
  harnesses.push(harness);
  const order: OrderInput = await harness.newOrder({ quantity: QUANTITY });
  await refuseCompletion(harness);
  const run = await crashThenRecover(harness, order, failpoint, cancelOnceConfirmationRefused(harness));
  return { harness, run };
}

/** Held and reserved, never captured: the void and the release have something to undo. */
async function crashWhileVoiding(failpoint: FailpointName): Promise<{ harness: SagaHarness; run: CrashRun }> {
  const harness = await startSagaHarness({ worker: false });
  harnesses.push(harness);
  const order: OrderInput = await harness.newOrder({ quantity: QUANTITY });
  harness.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1_000 });
  const run = await crashThenRecover(harness, order, failpoint, cancelOnceFailing(ActivityId.capturePayment, ''));
  return { harness, run };
}

/** The cancel reaches a failing step between attempts (the run ends cancelled) or during one (it compensates and returns). */
function expectCompensatedEnding(run: CrashRun) {
  if (run.ending.ended === 'returned') expect(run.ending.result.status).toBe('compensated');
}

/** One capture, one refund of all of it, each booked once, the stock returned once: whatever the crash interrupted. */
async function expectRefundedOnce(harness: SagaHarness, run: CrashRun) {
  const { order } = run;
  expectCompensatedEnding(run);
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.succeeded).toHaveLength(1);
  const captured = stripe.succeeded[0];
  expect(stripe.refunds.map((refund) => [refund.payment_intent, refund.amount, refund.status])).toEqual([
    [captured?.id, order.amount, 'succeeded'],
  ]);
  const refundId = stripe.refunds[0]?.id;
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
    { kind: 'charge', amount_minor: order.amount, stripe_object_id: captured?.id },
    { kind: 'refund', amount_minor: order.amount, stripe_object_id: refundId },
  ]);
  expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'released' }]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', refund_id: refundId });
  await harness.expectInvariants([order.orderId]);
}

/** One hold, voided once, nothing captured or refunded, the stock returned once. */
async function expectVoidedOnce(harness: SagaHarness, run: CrashRun) {
  const { order } = run;
  expectCompensatedEnding(run);
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.intents.map((intent) => [intent.status, intent.amount_received])).toEqual([['canceled', 0]]);
  expect(stripe.refunds).toEqual([]);
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
  expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'voided' });
  expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'released' }]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', refund_id: null });
  await harness.expectInvariants([order.orderId]);
}

/** The steps that write to Stripe on the way to a refund: the hold, its capture, the refund. */
const MONEY_STEPS = [ActivityId.authorizePayment, ActivityId.capturePayment, ActivityId.refundCapture] as const;

describe.concurrent('failure matrix: the worker is killed inside each compensation', () => {
  it(
    'compensation crash: worker killed after Stripe made the refund, before recording it: the retry replays under the same key, one refund',
    async () => {
      const { harness, run } = await crashWhileRefunding('refund.after-stripe');

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.refundCapture)).toBe(2);
      // The authorization, the capture and the refund executed once each; the refund re-sent
      // under its key and replayed.
      const writes = stripeWritesByStep(harness, run.runId, MONEY_STEPS);
      expect(MONEY_STEPS.map((step) => writes[step].executed)).toEqual([1, 1, 1]);
      expect(writes[ActivityId.refundCapture].replayed).toBeGreaterThanOrEqual(1);
      const refundKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.refundCapture });
      expect(await keyRecord(harness.db.pool, 'stripe.refund', refundKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectRefundedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 4 in compensation: worker killed after the refund and its ledger reversal committed, before completing: the retry is answered from Postgres, one refund',
    async () => {
      const { harness, run } = await crashWhileRefunding('refund.after-ledger');

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.refundCapture)).toBe(2);
      // The retry found the refund's key completed and never called Stripe: one refund request in all.
      const writes = stripeWritesByStep(harness, run.runId, MONEY_STEPS);
      expect(MONEY_STEPS.map((step) => writes[step].executed)).toEqual([1, 1, 1]);
      expect(writes[ActivityId.refundCapture]).toEqual({ requests: 1, executed: 1, replayed: 0 });
      const refundKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.refundCapture });
      expect(await keyRecord(harness.db.pool, 'stripe.refund', refundKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectRefundedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'compensation crash: worker killed after Stripe voided the hold, before recording it: the retry replays under the same key, one void, nothing refunded',
    async () => {
      const { harness, run } = await crashWhileVoiding('void.after-stripe');

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.voidAuthorization)).toBe(2);
      const voidKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.voidAuthorization });
      expect(await keyRecord(harness.db.pool, 'stripe.void', voidKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectVoidedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 4 in compensation: worker killed after the stock release committed, before completing: the retry releases nothing, stock returned once',
    async () => {
      const { harness, run } = await crashWhileRefunding('release-stock.after-commit');

      // The release is a local activity: the dead worker's workflow task timed out, and the fresh
      // worker ran the release again under the same key, recorded once.
      const history = await SagaHistory.of(run.handle);
      expect(history.workflowTaskTimeouts()).toBeGreaterThanOrEqual(1);
      expect(history.localActivities('releaseStock')).toHaveLength(1);
      await expectRefundedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );
});
