// Failure-matrix rows 1 and 14: Stripe commits an authorization, capture or void but its answer is
// lost twice; Temporal's retry is answered by Stripe's replay and the effect happens once.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { keyRecord, ledgerTransactions, paymentHold } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { endingOf } from '../support/workflow-ending.js';

/**
 * Rows 1 and 14: Stripe commits, but its answer never arrives. Two drops each time: the first
 * answer and the SDK's own single retry of it are both lost, so the activity attempt fails and
 * Temporal retries the activity under the same key, and Stripe replays its saved answer.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

describe('failure matrix rows 1 and 14: Stripe commits but the response is lost', () => {
  it('rows 1 and 14 / I1: the authorization\'s answer is lost twice: the retry is answered by Stripe\'s replay, one hold, captured once', async () => {
    const order = await harness.newOrder();
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 2 });
    const before = harness.emulator.counters();

    const started = await harness.start(order);
    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', orderId: order.orderId, refundId: null });
    const after = harness.emulator.counters();
    expect(after.faults.drop_response - before.faults.drop_response).toBe(2);
    // Stripe executed the authorization once and answered it three times: dropped, dropped (the
    // SDK's retry), then to the activity's second attempt; both later answers from its saved copy.
    expect(after.replays - before.replays).toBe(2);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.id, intent.status, intent.amount_received])).toEqual([[result.paymentIntentId, 'succeeded', order.amount]]);
    expect(stripe.refunds).toEqual([]);
    expect(stripe.succeeded[0]?.metadata).toMatchObject({ run_id: started.runId, activity_id: ActivityId.authorizePayment });

    const authorizationKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.authorizePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.authorize', authorizationKey)).toEqual({ state: 'completed', attempts: 2 });
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId },
    ]);
    await harness.expectInvariants([order.orderId]);
  });

  it('row 14 / I1: the capture\'s answer is lost twice: the retry is answered by Stripe\'s replay, captured once, booked once', async () => {
    const order = await harness.newOrder();
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 2 });
    const before = harness.emulator.counters();

    const started = await harness.start(order);
    const result = await started.handle.result();

    expect(result.status).toBe('completed');
    const after = harness.emulator.counters();
    expect(after.faults.drop_response - before.faults.drop_response).toBe(2);
    expect(after.replays - before.replays).toBe(2);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.status, intent.amount_received])).toEqual([['succeeded', order.amount]]);
    const captureKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.capturePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toEqual({ state: 'completed', attempts: 2 });
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId },
    ]);
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'captured', amount_captured: order.amount });
    await harness.expectInvariants([order.orderId]);
  });

  it('row 14 / I2 + I8: the void\'s answer is lost twice: the retry is answered by Stripe\'s replay, the hold voided once, nothing captured or refunded', async () => {
    const order = await harness.newOrder();
    // The capture cannot get through, so the order is cancelled with its hold in place.
    harness.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1_000 });
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents/:id/cancel', orderId: order.orderId, count: 2 });
    const { handle, runId } = await harness.start(order);
    await vi.waitFor(() => {
      expect(harness.emulator.counters().faults.fail_before_execution).toBeGreaterThanOrEqual(2);
    }, { timeout: 30_000, interval: 50 });
    const before = harness.emulator.counters();
    await handle.cancel();

    expect(await endingOf(handle)).toEqual({ ended: 'cancelled' });
    const after = harness.emulator.counters();
    expect(after.faults.drop_response - before.faults.drop_response).toBe(2);
    expect(after.replays - before.replays).toBe(2);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.status, intent.amount_received, intent.cancellation_reason])).toEqual([['canceled', 0, 'requested_by_customer']]);
    expect(stripe.refunds).toEqual([]);
    const voidKey = deriveIdempotencyKey({ runId, activityId: ActivityId.voidAuthorization });
    expect(await keyRecord(harness.db.pool, 'stripe.void', voidKey)).toEqual({ state: 'completed', attempts: 2 });
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'voided', amount_captured: null });
    await harness.expectInvariants([order.orderId]);
  });
});
