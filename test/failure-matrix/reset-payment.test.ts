// Failure-matrix rows 7 and 16: `temporal workflow reset` of a run that held and captured re-runs
// its steps under the original keys: one hold, one capture, whatever the reset point.
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { OrderResult } from '../../src/domain/order-result.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { resetWorkflow, type ResetTarget } from '../support/temporal-cli.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Rows 7 and 16: `temporal workflow reset` of a run that already holds and captured. Reset
 * starts a new run that re-executes every activity after the reset point; the saga's keys are
 * made from the original execution run ID, which Temporal carries across Reset, so the
 * re-executed reservation, authorization and capture present the keys they presented the first
 * time, and each is answered with its first outcome.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

interface CompletedRun {
  order: OrderInput;
  runId: string;
  result: OrderResult;
}

async function completedOrder(): Promise<CompletedRun> {
  const order = await harness.newOrder({ quantity: 2 });
  const started = await harness.start(order);
  const result = await started.handle.result();
  expect(result.status).toBe('completed');
  return { order, runId: started.runId, result };
}

async function resetAndFinish(run: CompletedRun, target: ResetTarget, reason: string) {
  const workflowId = `order-payment-${run.order.orderId}`;
  const newRunId = await resetWorkflow({ workflowId, runId: run.runId, target, reason });
  expect(newRunId).not.toBe(run.runId);
  const handle: WorkflowHandle<typeof orderPaymentSaga> = harness.client.workflow.getHandle(workflowId, newRunId);
  const result = await handle.result();
  return { handle, result, history: await SagaHistory.of(handle) };
}

/** What every reset must leave behind: one hold, captured once under the first run's keys, stock taken once. */
async function expectCapturedOnce(run: CompletedRun) {
  const { order } = run;
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.intents.map((intent) => [intent.id, intent.status, intent.amount_received])).toEqual([[run.result.paymentIntentId, 'succeeded', order.amount]]);
  // The hold carries the run ID its key was made from: the original run's.
  expect(stripe.succeeded[0]?.metadata).toMatchObject({ run_id: run.runId, activity_id: ActivityId.authorizePayment });
  expect(stripe.refunds).toEqual([]);
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
    { kind: 'charge', amount_minor: order.amount, stripe_object_id: run.result.paymentIntentId },
  ]);
  expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'captured', amount_captured: order.amount });
  expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: 2, state: 'allocated' }]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(8);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: run.result.paymentIntentId });
  await harness.expectInvariants([order.orderId]);
}

describe('failure matrix rows 7 and 16: temporal workflow reset of a run that already holds and captured', () => {
  it('row 7: reset to the first workflow task re-runs every step under the original keys: one hold, one capture, Stripe not called again', async () => {
    const run = await completedOrder();
    const stripeRequestsBefore = harness.emulator.counters().requests;

    const reset = await resetAndFinish(run, { type: 'FirstWorkflowTask' }, 'failure matrix row 7: reset to the first workflow task');

    expect(reset.result).toEqual(run.result);
    // Temporal kept the original run ID across the reset; that is what the keys are made from.
    expect(reset.history.originalExecutionRunId()).toBe(run.runId);
    // The reset run scheduled and completed the payment steps itself, and their keys answered from Postgres.
    for (const step of [ActivityId.authorizePayment, ActivityId.capturePayment]) {
      expect(reset.history.scheduledEventId(step)).toBeGreaterThan(reset.history.resetPoint());
      expect(reset.history.completedAttempt(step)).toBe(1);
    }
    expect(harness.emulator.counters().requests).toBe(stripeRequestsBefore);
    const authorizationKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.authorizePayment });
    const captureKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.capturePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.authorize', authorizationKey)).toEqual({ state: 'completed', attempts: 2 });
    expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toEqual({ state: 'completed', attempts: 2 });
    await expectCapturedOnce(run);
  });

  it('row 16: reset to the workflow task between the authorization and the capture: the capture re-runs under its key, one capture', async () => {
    const run = await completedOrder();
    const before = await SagaHistory.of(harness.handle(run.order));
    const betweenHoldAndCapture = before.workflowTaskThatScheduled(ActivityId.capturePayment);
    expect(betweenHoldAndCapture).toBeGreaterThan(before.completedEventId(ActivityId.authorizePayment));
    const stripeRequestsBefore = harness.emulator.counters().requests;

    const reset = await resetAndFinish(run, { eventId: betweenHoldAndCapture }, 'failure matrix row 16: reset between the hold and the capture');

    expect(reset.result).toEqual(run.result);
    expect(reset.history.originalExecutionRunId()).toBe(run.runId);
    // The hold is history the reset run kept; the capture ran again after it, answered from Postgres.
    expect(reset.history.completedEventId(ActivityId.authorizePayment)).toBeLessThan(reset.history.resetPoint());
    expect(reset.history.scheduledEventId(ActivityId.capturePayment)).toBeGreaterThan(reset.history.resetPoint());
    expect(harness.emulator.counters().requests).toBe(stripeRequestsBefore);
    await expectCapturedOnce(run);
  });

  it('row 16: reset to the workflow task after the capture: the confirmation re-runs, nothing is captured again', async () => {
    const run = await completedOrder();
    const before = await SagaHistory.of(harness.handle(run.order));
    // The confirmation is a local activity, recorded by the workflow task that ran it.
    const [confirmation] = before.localActivities('confirmOrder');
    if (!confirmation) throw new Error('the completed run recorded no confirmation');
    const afterCapture = confirmation.workflowTaskCompletedEventId;
    expect(afterCapture).toBeGreaterThan(before.completedEventId(ActivityId.capturePayment));
    const stripeRequestsBefore = harness.emulator.counters().requests;

    const reset = await resetAndFinish(run, { eventId: afterCapture }, 'failure matrix row 16: reset after the capture');

    expect(reset.result).toEqual(run.result);
    expect(reset.history.completedEventId(ActivityId.capturePayment)).toBeLessThan(reset.history.resetPoint());
    const confirmations = reset.history.localActivities('confirmOrder');
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0]?.eventId).toBeGreaterThan(reset.history.resetPoint());
    expect(harness.emulator.counters().requests).toBe(stripeRequestsBefore);
    await expectCapturedOnce(run);
  });
});
