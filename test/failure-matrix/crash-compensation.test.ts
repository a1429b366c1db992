import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { FailpointName } from '../../src/failpoints/failpoint.js';
import { deriveIdempotencyKey } from '../../src/idempotency/idempotency-key.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { CRASH_TEST_TIMEOUT_MS, crashThenRecover, type CrashRun } from '../support/crash-recovery.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { stopWorkerProcesses } from '../support/worker-process.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Row 4 inside the compensations, and a crash inside each compensation: the worker process
 * SIGKILLs itself in the refund, the ledger reversal or the stock release, and a fresh worker
 * process finishes the undo. The order is charged and its stock allocated, then its
 * confirmation is refused (a trigger stands in for a database that will not take the write)
 * and the order is cancelled, so every compensation has something to undo.
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
 * saga retries its confirmation until it is cancelled.
 */
async function refuseCompletion(harness: SagaHarness): Promise<void> {
  await harness.db.pool.query(`
    create function refuse_completion() returns trigger language plpgsql as $$
    begin
      raise exception 'failure matrix: order % may not complete', new.order_id;
    end $$;
    create trigger refuse_completion before update of status on orders
      for each row when (new.status = 'completed') execute function refuse_completion();`);
}

/** Cancels the order once its confirmation has been refused: charged and allocated, not completed. */
async function cancelWhileConfirmationIsRefused(handle: WorkflowHandle<typeof orderPaymentSaga>): Promise<void> {
  await vi.waitFor(
    async () => {
      const { raw } = await handle.describe();
      const confirm = raw.pendingActivities?.find((activity) => activity.activityId === ActivityId.confirmOrder);
      expect(confirm?.lastFailure?.message).toContain('may not complete');
    },
    { timeout: 120_000, interval: 250 },
  );
  await handle.cancel();
}

async function crashDuringCompensation(failpoint: FailpointName): Promise<{ harness: SagaHarness; run: CrashRun }> {
  const harness = await startSagaHarness({ worker: false });
  harnesses.push(harness);
  const order: OrderInput = await harness.newOrder({ quantity: QUANTITY });
  await refuseCompletion(harness);
  const run = await crashThenRecover(harness, order, failpoint, cancelWhileConfirmationIsRefused);
  return { harness, run };
}

/** One charge, one refund of all of it, each booked once, the stock returned once: whatever the crash interrupted. */
async function expectCompensatedOnce(harness: SagaHarness, run: CrashRun) {
  const { order } = run;
  // The cancel reaches the confirmation between attempts (the run ends cancelled) or during one
  // (the attempt fails, the saga compensates for it and returns): compensated either way.
  if (run.ending.ended === 'returned') expect(run.ending.result.status).toBe('compensated');
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.succeeded).toHaveLength(1);
  const charge = stripe.succeeded[0];
  expect(stripe.refunds.map((refund) => [refund.payment_intent, refund.amount, refund.status])).toEqual([
    [charge?.id, order.amount, 'succeeded'],
  ]);
  const refundId = stripe.refunds[0]?.id;
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
    { kind: 'charge', amount_minor: order.amount, stripe_object_id: charge?.id },
    { kind: 'refund', amount_minor: order.amount, stripe_object_id: refundId },
  ]);
  expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'released' }]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', refund_id: refundId });
  await harness.expectInvariants([order.orderId]);
}

describe.concurrent('failure matrix: the worker is killed inside each compensation', () => {
  it(
    'compensation crash: worker killed after Stripe made the refund, before recording it: the retry replays under the same key, one refund',
    async () => {
      const { harness, run } = await crashDuringCompensation('refund.after-stripe');
      const counters = harness.emulator.counters();

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.refundPayment)).toBe(2);
      // The charge, the refund, and the refund re-sent under its key and replayed.
      expect(counters.requests).toBe(3);
      expect(counters.replays).toBe(1);
      const refundKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.refundPayment });
      expect(await keyRecord(harness.db.pool, 'stripe.refund', refundKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectCompensatedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'compensation crash: worker killed after the refund outcome committed, before completing: the retry is answered from Postgres, one refund',
    async () => {
      const { harness, run } = await crashDuringCompensation('refund.after-commit');
      const counters = harness.emulator.counters();

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.refundPayment)).toBe(2);
      expect(counters.requests).toBe(2);
      expect(counters.replays).toBe(0);
      const refundKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.refundPayment });
      expect(await keyRecord(harness.db.pool, 'stripe.refund', refundKey)).toEqual({ state: 'completed', attempts: 2 });
      await expectCompensatedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 4 in compensation: worker killed after the ledger reversal committed, before completing: the retry is a no-op, the ledger reversed once',
    async () => {
      const { harness, run } = await crashDuringCompensation('record-refund.after-ledger');

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.recordRefund)).toBe(2);
      expect(harness.emulator.counters().requests).toBe(2);
      await expectCompensatedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );

  it(
    'row 4 in compensation: worker killed after the stock release committed, before completing: the retry releases nothing, stock returned once',
    async () => {
      const { harness, run } = await crashDuringCompensation('release-stock.after-commit');

      expect((await SagaHistory.of(run.handle)).completedAttempt(ActivityId.releaseStock)).toBe(2);
      await expectCompensatedOnce(harness, run);
    },
    CRASH_TEST_TIMEOUT_MS,
  );
});
