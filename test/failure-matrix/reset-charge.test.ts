import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { OrderResult } from '../../src/domain/order-result.js';
import { deriveIdempotencyKey } from '../../src/idempotency/idempotency-key.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { resetWorkflow, type ResetTarget } from '../support/temporal-cli.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Row 7: `temporal workflow reset` of a run that already charged. Reset starts a new run that
 * re-executes every activity after the reset point; the saga's keys are made from the
 * original execution run ID, which Temporal carries across Reset, so the re-executed charge
 * and allocation present the keys they presented the first time.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

interface ChargedRun {
  order: OrderInput;
  runId: string;
  result: OrderResult;
}

async function completedOrder(): Promise<ChargedRun> {
  const order = await harness.newOrder({ quantity: 2 });
  const started = await harness.start(order);
  const result = await started.handle.result();
  expect(result.status).toBe('completed');
  return { order, runId: started.runId, result };
}

async function resetAndFinish(run: ChargedRun, target: ResetTarget, reason: string) {
  const workflowId = `order-payment-${run.order.orderId}`;
  const newRunId = await resetWorkflow({ workflowId, runId: run.runId, target, reason });
  expect(newRunId).not.toBe(run.runId);
  const handle: WorkflowHandle<typeof orderPaymentSaga> = harness.client.workflow.getHandle(workflowId, newRunId);
  const result = await handle.result();
  return { handle, result, history: await SagaHistory.of(handle) };
}

/** The guarantees both resets must leave behind: one charge, charged to the first run's key, stock taken once. */
async function expectChargedOnce(run: ChargedRun) {
  const { order } = run;
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.succeeded.map((intent) => intent.id)).toEqual([run.result.paymentIntentId]);
  // The charge carries the run ID its key was made from: the original run's.
  expect(stripe.succeeded[0]?.metadata).toMatchObject({ run_id: run.runId, activity_id: ActivityId.chargePayment });
  expect(stripe.refunds).toEqual([]);
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
    { kind: 'charge', amount_minor: order.amount, stripe_object_id: run.result.paymentIntentId },
  ]);
  expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: 2, state: 'allocated' }]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(8);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: run.result.paymentIntentId });
  await harness.expectInvariants([order.orderId]);
}

describe('failure matrix row 7: temporal workflow reset of a run that already charged', () => {
  it('row 7: reset to the first workflow task re-runs the charge under the original key: one charge, Stripe not called again', async () => {
    const run = await completedOrder();
    const stripeRequestsBefore = harness.emulator.counters().requests;

    const reset = await resetAndFinish(run, { type: 'FirstWorkflowTask' }, 'failure matrix row 7: reset to the first workflow task');

    expect(reset.result).toEqual(run.result);
    // Temporal kept the original run ID across the reset; that is what the keys are made from.
    expect(reset.history.originalExecutionRunId()).toBe(run.runId);
    // The reset run scheduled and completed the charge itself, and the key answered it from Postgres.
    expect(reset.history.scheduledEventId(ActivityId.chargePayment)).toBeGreaterThan(reset.history.resetPoint());
    expect(reset.history.completedAttempt(ActivityId.chargePayment)).toBe(1);
    expect(harness.emulator.counters().requests).toBe(stripeRequestsBefore);
    const chargeKey = deriveIdempotencyKey({ runId: run.runId, activityId: ActivityId.chargePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.charge', chargeKey)).toEqual({ state: 'completed', attempts: 2 });
    await expectChargedOnce(run);
  });

  it('row 7: reset to the workflow task between the charge and the stock allocation: one charge, stock allocated once', async () => {
    const run = await completedOrder();
    const before = await SagaHistory.of(harness.handle(run.order));
    const betweenChargeAndAllocation = before.workflowTaskThatScheduled(ActivityId.allocateStock);
    expect(betweenChargeAndAllocation).toBeGreaterThan(before.completedEventId(ActivityId.chargePayment));

    const reset = await resetAndFinish(
      run,
      { eventId: betweenChargeAndAllocation },
      'failure matrix row 7: reset between the charge and the stock allocation',
    );

    expect(reset.result).toEqual(run.result);
    expect(reset.history.originalExecutionRunId()).toBe(run.runId);
    // The charge's completion is history the reset run kept; the allocation ran again after it.
    expect(reset.history.completedEventId(ActivityId.chargePayment)).toBeLessThan(reset.history.resetPoint());
    expect(reset.history.scheduledEventId(ActivityId.allocateStock)).toBeGreaterThan(reset.history.resetPoint());
    await expectChargedOnce(run);
  });
});
