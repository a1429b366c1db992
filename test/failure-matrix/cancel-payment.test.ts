// Failure-matrix rows 8 and 17: a cancel while the authorization or capture is in flight waits for
// the step, then voids the hold or refunds the capture, and fences a step that never happened.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import type { StartedOrder } from '../../src/saga-client/start-order.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { endingOf } from '../support/workflow-ending.js';

/**
 * Rows 8 and 17: the workflow is cancelled while the authorization or the capture is in flight.
 * The step waits for its attempt to finish before the saga compensates, and each compensation
 * resolves what its step really did: never captured money without a refund, never a hold left
 * open, and a step that never happened is fenced so no late attempt can make it happen.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

const STOCKED = 10;

/**
 * Starts the order with Stripe holding (latency) or refusing (500s) the request at `path`, and
 * cancels it once the request has reached Stripe, or Temporal has retried it at least once.
 */
async function startThenCancelDuring(order: OrderInput, path: string, kind: 'latency' | 'failing'): Promise<StartedOrder> {
  if (kind === 'latency') harness.emulator.addFault({ kind: 'latency', method: 'POST', path, orderId: order.orderId, latencyMs: 5_000 });
  else harness.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path, orderId: order.orderId, count: 1_000 });
  const before = harness.emulator.counters().faults;
  const started = await harness.start(order);
  await vi.waitFor(() => {
    const faults = harness.emulator.counters().faults;
    if (kind === 'latency') expect(faults.latency - before.latency).toBe(1);
    else expect(faults.fail_before_execution - before.fail_before_execution).toBeGreaterThanOrEqual(2);
  }, { timeout: 30_000, interval: 50 });
  await started.handle.cancel();
  return started;
}

/** Cancelled before anything was captured: the stock is back and the order compensated as cancelled. */
async function expectUndoneBeforeCapture(orderId: string, sku: string) {
  expect(await ledgerTransactions(harness.db.pool, orderId)).toEqual([]);
  expect(await stockAllocations(harness.db.pool, orderId)).toEqual([{ quantity: 1, state: 'released' }]);
  expect(await availableStock(harness.db.pool, sku)).toBe(STOCKED);
  expect(await orderRow(harness.db.pool, orderId)).toMatchObject({ status: 'compensated', status_reason: 'cancelled', refund_id: null });
  await harness.expectInvariants([orderId]);
}

describe('failure matrix rows 8 and 17: the workflow is cancelled while the payment is in flight', () => {
  it('row 17: cancelled while Stripe places the hold: the hold lands and is voided, nothing captured, no refund', async () => {
    const order = await harness.newOrder();
    const { handle } = await startThenCancelDuring(order, '/v1/payment_intents', 'latency');

    expect(await endingOf(handle)).toEqual({ ended: 'cancelled' });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.status, intent.amount_received, intent.cancellation_reason])).toEqual([['canceled', 0, 'requested_by_customer']]);
    expect(stripe.refunds).toEqual([]);
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'voided', amount_captured: null });
    await expectUndoneBeforeCapture(order.orderId, order.sku);
  });

  it('rows 8 and 17: cancelled while Stripe keeps failing the authorization before executing it: no hold, nothing voided or refunded, the authorization key fenced', async () => {
    const order = await harness.newOrder();
    const started = await startThenCancelDuring(order, '/v1/payment_intents', 'failing');

    expect(await endingOf(started.handle)).toEqual({ ended: 'cancelled' });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    // The void found nothing at Stripe and closed the authorization key: no late attempt can hold.
    const authorizationKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.authorizePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.authorize', authorizationKey)).toMatchObject({ state: 'failed' });
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ payment_intent_id: null });
    await expectUndoneBeforeCapture(order.orderId, order.sku);
  });

  it('rows 8 and 17: cancelled while Stripe captures: the capture lands and is refunded once, the run ends cancelled', async () => {
    const order = await harness.newOrder();
    const { handle } = await startThenCancelDuring(order, '/v1/payment_intents/:id/capture', 'latency');

    expect(await endingOf(handle)).toEqual({ ended: 'cancelled' });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded).toHaveLength(1);
    const captured = stripe.succeeded[0];
    expect(stripe.refunds.map((refund) => [refund.payment_intent, refund.amount, refund.status])).toEqual([[captured?.id, order.amount, 'succeeded']]);
    const refundId = stripe.refunds[0]?.id;
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: captured?.id },
      { kind: 'refund', amount_minor: order.amount, stripe_object_id: refundId },
    ]);
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', status_reason: 'cancelled', refund_id: refundId });
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: 1, state: 'released' }]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
    await harness.expectInvariants([order.orderId]);
  });

  it('row 17: cancelled while Stripe keeps failing the capture: nothing captured, the capture key fenced, the hold voided, no refund', async () => {
    const order = await harness.newOrder();
    const started = await startThenCancelDuring(order, '/v1/payment_intents/:id/capture', 'failing');

    expect(await endingOf(started.handle)).toEqual({ ended: 'cancelled' });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.status, intent.amount_received])).toEqual([['canceled', 0]]);
    expect(stripe.refunds).toEqual([]);
    const captureKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.capturePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toMatchObject({ state: 'failed' });
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'voided' });
    await expectUndoneBeforeCapture(order.orderId, order.sku);
  });
});
