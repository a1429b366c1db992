// Failure-matrix row 6: a refund retried after a lost response, and after resets around it during
// compensation, refunds once and reverses the ledger once.
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { OrderResult } from '../../src/domain/order-result.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { resetWorkflow } from '../support/temporal-cli.js';
import { refuseCompletion } from '../support/refuse-completion.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Row 6: a refund is retried after a lost response, and again after a reset during
 * compensation. The database here refuses to let any order complete, so the saga captures, finds
 * the order not confirmable, and compensates with a refund of what it captured.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
  await refuseCompletion(harness.db.pool);
});
afterAll(() => harness.close());

const STOCKED = 10;

async function refusedOrder(): Promise<OrderInput> {
  return harness.newOrder();
}

/** One refund of the whole capture, in Stripe and in the ledger, and nothing else moved. */
async function expectRefundedOnce(order: OrderInput, result: OrderResult) {
  expect(result).toMatchObject({ status: 'compensated', orderId: order.orderId });
  expect(result.refundId).toMatch(/^re_/);
  const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
  expect(stripe.succeeded.map((intent) => [intent.id, intent.amount_received])).toEqual([[result.paymentIntentId, order.amount]]);
  expect(stripe.refunds.map((refund) => [refund.id, refund.amount, refund.status])).toEqual([[result.refundId, order.amount, 'succeeded']]);
  expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
    { kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId },
    { kind: 'refund', amount_minor: order.amount, stripe_object_id: result.refundId },
  ]);
  expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
  expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', refund_id: result.refundId });
  await harness.expectInvariants([order.orderId]);
}

describe('failure matrix row 6: a refund retried after a lost response, and after a reset during compensation', () => {
  it('row 6: the refund response is lost twice, the activity attempt fails and Temporal retries it: the retry replays, one refund', async () => {
    const order = await refusedOrder();
    // Two drops: the SDK's own reconnect under the same key is lost too, so the activity
    // attempt itself fails and the retry comes from Temporal.
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/refunds', orderId: order.orderId, count: 2 });
    const started = await harness.start(order);
    const result = await started.handle.result();

    await expectRefundedOnce(order, result);
    const counters = harness.emulator.counters();
    expect(counters.faults.drop_response).toBe(2);
    // Both later requests were answered with the first one's saved response.
    expect(counters.replays).toBe(2);
    const history = await SagaHistory.of(started.handle);
    expect(history.completedAttempt(ActivityId.refundCapture)).toBe(2);
    const refundKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.refundCapture });
    expect(await keyRecord(harness.db.pool, 'stripe.refund', refundKey)).toEqual({ state: 'completed', attempts: 2 });
  });

  it('row 6: reset to before the refund, then to after it: one refund, the ledger reversed once', async () => {
    const order = await refusedOrder();
    const started = await harness.start(order);
    const first = await started.handle.result();
    await expectRefundedOnce(order, first);
    const workflowId = started.workflowId;

    // Reset 1: the refund (with its ledger reversal), the void and the close all run again.
    const beforeRefund = (await SagaHistory.of(started.handle)).workflowTaskThatScheduled(ActivityId.refundCapture);
    const resetRunId = await resetWorkflow({
      workflowId,
      runId: started.runId,
      target: { eventId: beforeRefund },
      reason: 'failure matrix row 6: reset to before the refund',
    });
    const resetHandle: WorkflowHandle<typeof orderPaymentSaga> = harness.client.workflow.getHandle(workflowId, resetRunId);
    const requestsBeforeReset = harness.emulator.counters().requests;
    // Reset points are workflow tasks, and the confirmation is a local activity of the task that
    // scheduled the refund: the reset run confirms again, and finds the order compensated now.
    // Everything else about its end is the first run's.
    const afterFirstReset = await resetHandle.result();
    expect(afterFirstReset).toEqual({ ...first, reason: `OrderNotConfirmable: order ${order.orderId} cannot be confirmed from status 'compensated'` });
    // The re-run refund was answered from Postgres by its completed key: Stripe was not called.
    expect(harness.emulator.counters().requests).toBe(requestsBeforeReset);
    const resetHistory = await SagaHistory.of(resetHandle);
    expect(resetHistory.originalExecutionRunId()).toBe(started.runId);
    expect(resetHistory.scheduledEventId(ActivityId.refundCapture)).toBeGreaterThan(resetHistory.resetPoint());
    await expectRefundedOnce(order, first);

    // Reset 2, of the reset run: the refund's result is history; the void after it runs again.
    const afterRefund = resetHistory.workflowTaskThatScheduled(ActivityId.voidAuthorization);
    expect(afterRefund).toBeGreaterThan(resetHistory.completedEventId(ActivityId.refundCapture));
    const secondResetRunId = await resetWorkflow({
      workflowId,
      runId: resetRunId,
      target: { eventId: afterRefund },
      reason: 'failure matrix row 6: reset between the refund and the void',
    });
    const secondHandle: WorkflowHandle<typeof orderPaymentSaga> = harness.client.workflow.getHandle(workflowId, secondResetRunId);
    const requestsBeforeSecondReset = harness.emulator.counters().requests;
    expect(await secondHandle.result()).toEqual(afterFirstReset);
    expect(harness.emulator.counters().requests).toBe(requestsBeforeSecondReset);
    const secondHistory = await SagaHistory.of(secondHandle);
    expect(secondHistory.originalExecutionRunId()).toBe(started.runId);
    expect(secondHistory.completedEventId(ActivityId.refundCapture)).toBeLessThan(secondHistory.resetPoint());
    expect(secondHistory.scheduledEventId(ActivityId.voidAuthorization)).toBeGreaterThan(secondHistory.resetPoint());
    await expectRefundedOnce(order, first);

    // The first reset's refund presented the first run's key (a second attempt); the second did not refund.
    const refundKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.refundCapture });
    expect(await keyRecord(harness.db.pool, 'stripe.refund', refundKey)).toEqual({ state: 'completed', attempts: 2 });
  });
});
