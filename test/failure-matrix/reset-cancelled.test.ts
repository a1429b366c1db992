// Failure-matrix row 24: a run reset to its first workflow task and cancelled at once undoes what
// the earlier run held and reserved, and leaves a completed order confirmed.
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { availableStock, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { resetWorkflow } from '../support/temporal-cli.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';
import { withTimeout } from '../support/with-timeout.js';
import { endingOf } from '../support/workflow-ending.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Row 20: `temporal workflow reset` to the first workflow task, and the new run cancelled before
 * it reaches the steps the run before it took. The new run starts from nothing, but the run
 * before it reserved stock and placed a hold (or completed the order) under the same keys. Each
 * test has its own database, emulator and task queue.
 */
const harnesses: SagaHarness[] = [];
afterAll(async () => {
  await stopWorkerProcesses();
  await Promise.all(harnesses.map((harness) => harness.close()));
});

const STOCKED = 10;
const QUANTITY = 3;

/** Resets the run to its first workflow task with no worker polling, and cancels the new run before any worker sees it. */
async function resetAndCancelBeforeItRuns(harness: SagaHarness, order: OrderInput, runId: string): Promise<WorkflowHandle<typeof orderPaymentSaga>> {
  const workflowId = `order-payment-${order.orderId}`;
  const newRunId = await resetWorkflow({ workflowId, runId, target: { type: 'FirstWorkflowTask' }, reason: 'failure matrix row 20: reset, then cancel at once' });
  const handle: WorkflowHandle<typeof orderPaymentSaga> = harness.client.workflow.getHandle(workflowId, newRunId);
  await handle.cancel();
  await harness.startWorker();
  return handle;
}

describe.concurrent('failure matrix row 24: a reset run cancelled before it reaches the earlier run\'s steps', () => {
  it('the earlier run reserved and held, then its worker died: the reset run, cancelled at once, voids the hold and releases the stock it never took itself', async () => {
    const harness = await startSagaHarness({ worker: false });
    harnesses.push(harness);
    const order = await harness.newOrder({ quantity: QUANTITY });
    // The worker kills itself once the hold is placed and recorded, before it reports.
    const doomed = await startWorkerProcess(harness, { failpoints: ['authorize.after-commit'] });
    const started = await harness.start(order);
    expect(await doomed.waitForExit(120_000)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'allocated' }]);
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'held' });

    const handle = await resetAndCancelBeforeItRuns(harness, order, started.runId);
    const ending = await withTimeout(endingOf(handle), 120_000, () => 'the reset run did not end');

    expect(ending.ended).toBe('cancelled');
    const history = await SagaHistory.of(handle);
    expect(history.originalExecutionRunId()).toBe(started.runId);
    // The earlier run's hold is voided (free) and its stock is back; nothing was captured or refunded.
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.status, intent.amount_received])).toEqual([['canceled', 0]]);
    expect(stripe.refunds).toEqual([]);
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'released' }]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', status_reason: 'cancelled' });
    await harness.expectInvariants([order.orderId]);
  }, 240_000);

  it('the earlier run completed the order: the reset run, cancelled at once, undoes nothing, and the order stays confirmed with its capture and its stock', async () => {
    const harness = await startSagaHarness({ worker: false });
    harnesses.push(harness);
    const order = await harness.newOrder({ quantity: QUANTITY });
    await harness.startWorker();
    const started = await harness.start(order);
    const result = await started.handle.result();
    expect(result.status).toBe('completed');
    await harness.stopWorker();

    const handle = await resetAndCancelBeforeItRuns(harness, order, started.runId);
    const ending = await withTimeout(endingOf(handle), 120_000, () => 'the reset run did not end');

    expect(ending.ended).toBe('cancelled');
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.id, intent.status, intent.amount_received])).toEqual([[result.paymentIntentId, 'succeeded', order.amount]]);
    expect(stripe.refunds).toEqual([]);
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: QUANTITY, state: 'allocated' }]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED - QUANTITY);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([{ kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId }]);
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'completed' });
    await harness.expectInvariants([order.orderId]);
  }, 240_000);
});
