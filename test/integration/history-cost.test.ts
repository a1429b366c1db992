// Pins what each saga path costs the Temporal server (history events, workflow tasks, activity
// tasks, local activities, search-attribute upserts, timers), read from the real histories, so a
// change that adds round trips fails here and has to say so.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import { historyCost, type HistoryCost } from '../../src/platform/temporal/history-cost.js';
import { startOrderForPaymentOutcome } from '../../src/saga-client/payment-outcome.js';
import type { StartedOrder } from '../../src/saga-client/start-order.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { endingOf } from '../support/workflow-ending.js';

/*
 * A completed order: three workflow tasks (the start, after the hold, after the capture), the two
 * Stripe activities, the record-and-reserve and the confirmation as local-activity markers, the
 * hold and the end as search-attribute upserts; no timer (the capture checks its deadline itself).
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

/** Starts the order with Stripe holding the request at `path`, and cancels the run once the request is there. */
async function cancelWhileStripeWorks(order: OrderInput, path: string): Promise<StartedOrder> {
  harness.emulator.addFault({ kind: 'latency', method: 'POST', path, orderId: order.orderId, latencyMs: 1_500 });
  const before = harness.emulator.counters().faults.latency;
  const started = await harness.start(order);
  await vi.waitFor(() => { expect(harness.emulator.counters().faults.latency - before).toBe(1); }, { timeout: 30_000, interval: 20 });
  await started.handle.cancel();
  expect(await endingOf(started.handle)).toEqual({ ended: 'cancelled' });
  return started;
}

async function costOf(started: { handle: StartedOrder['handle'] }): Promise<HistoryCost> {
  return historyCost(await started.handle.fetchHistory());
}

describe('what one order costs the Temporal server, per saga path', () => {
  it('a completed order', async () => {
    const started = await harness.start(await harness.newOrder());
    expect(await started.handle.result()).toMatchObject({ status: 'completed' });
    expect(await costOf(started)).toEqual({ events: 21, workflowTasks: 3, activityTasks: 2, localActivities: 2, searchAttributeUpserts: 2, timers: 0 });
  });

  it('a completed order whose checkout was answered in one call (Update-with-Start)', async () => {
    const order = await harness.newOrder();
    const answered = await startOrderForPaymentOutcome(harness.client, harness.taskQueue, order, { updateId: randomUUID(), waitMs: 30_000 });
    expect(answered.payment).toMatchObject({ status: 'authorized' });
    expect(await answered.handle.result()).toMatchObject({ status: 'completed' });
    expect(await costOf(answered)).toEqual({ events: 23, workflowTasks: 3, activityTasks: 2, localActivities: 2, searchAttributeUpserts: 2, timers: 0 });
  });

  it('a declined card', async () => {
    const started = await harness.start(await harness.newOrder({ paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' }));
    expect(await started.handle.result()).toMatchObject({ status: 'declined' });
    expect(await costOf(started)).toEqual({ events: 21, workflowTasks: 3, activityTasks: 2, localActivities: 3, searchAttributeUpserts: 1, timers: 0 });
  });

  it('an order out of stock', async () => {
    const started = await harness.start(await harness.newOrder({ quantity: 11 }));
    expect(await started.handle.result()).toMatchObject({ status: 'compensated' });
    expect(await costOf(started)).toEqual({ events: 11, workflowTasks: 1, activityTasks: 0, localActivities: 4, searchAttributeUpserts: 2, timers: 0 });
  });

  it('an order cancelled before the capture (while Stripe places the hold)', async () => {
    const started = await cancelWhileStripeWorks(await harness.newOrder(), '/v1/payment_intents');
    expect(await costOf(started)).toEqual({ events: 35, workflowTasks: 5, activityTasks: 3, localActivities: 4, searchAttributeUpserts: 3, timers: 0 });
  });

  it('an order cancelled after the capture (while Stripe captures)', async () => {
    const started = await cancelWhileStripeWorks(await harness.newOrder(), '/v1/payment_intents/:id/capture');
    expect(await costOf(started)).toEqual({ events: 41, workflowTasks: 6, activityTasks: 4, localActivities: 4, searchAttributeUpserts: 3, timers: 0 });
  });
});
