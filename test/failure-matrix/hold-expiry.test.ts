// Failure-matrix row 18: a hold that expires before the capture, by the saga's durable deadline or
// by Stripe letting it lapse, ends the order compensated with AuthorizationExpired, nothing captured.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { FailureType } from '../../src/domain/failures.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { SagaHistory } from '../support/workflow-history.js';

/**
 * Row 18: the hold expires while the saga waits to capture it. Stripe gives an online card
 * authorization 7 days (`capture_before`); the saga stops trying a few moments before that, by a
 * durable timer, and voids what is left. Both ends are proved here: the saga's own deadline (a
 * capture margin that leaves seconds of the window), and Stripe letting the hold lapse (the
 * emulator's clock moved past `capture_before`).
 */
const WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
/** Leaves this much of the 7-day window for the capture: the saga's deadline comes in seconds. */
const LEFT_FOR_CAPTURE_MS = 6_000;

/** A worker whose capture deadline comes seconds after the hold. */
let deadlineSoon: SagaHarness;
/** A worker with the default margin (an hour before `capture_before`). */
let defaults: SagaHarness;

beforeAll(async () => {
  [deadlineSoon, defaults] = await Promise.all([
    startSagaHarness({ deps: { captureMarginMs: WINDOW_MS - LEFT_FOR_CAPTURE_MS } }),
    startSagaHarness(),
  ]);
});
afterAll(() => Promise.all([deadlineSoon.close(), defaults.close()]));

async function untilFired(harness: SagaHarness, ruleId: string, times: number): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 10) {
    if ((harness.emulator.listFaults().find((rule) => rule.id === ruleId)?.fired ?? 0) >= times) return;
    await sleep(10);
  }
  throw new Error(`fault ${ruleId} did not fire ${times} time(s) within 30 s`);
}

/** The hold lapsed or was voided: nothing captured, nothing refunded, the stock back. */
async function expectNothingCaptured(harness: SagaHarness, orderId: string, sku: string) {
  const stripe = await stripeObjectsFor(harness.stripe, orderId);
  expect(stripe.intents.map((intent) => [intent.status, intent.amount_received])).toEqual([['canceled', 0]]);
  expect(stripe.refunds).toEqual([]);
  expect(await ledgerTransactions(harness.db.pool, orderId)).toEqual([]);
  expect(await stockAllocations(harness.db.pool, orderId)).toEqual([{ quantity: 1, state: 'released' }]);
  expect(await availableStock(harness.db.pool, sku)).toBe(10);
  await harness.expectInvariants([orderId]);
  return stripe.intents[0];
}

describe('failure matrix row 18: the hold expires while the saga waits to capture it', () => {
  it('row 18: the capture cannot get through before the capture deadline: its first attempt past the deadline stops it, the hold is voided, the order compensated with AuthorizationExpired', async () => {
    const harness = deadlineSoon;
    const order = await harness.newOrder();
    // Stripe refuses every capture attempt: the saga keeps retrying until its deadline.
    harness.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1_000 });
    const started = await harness.start(order);

    const result = await started.handle.result();

    expect(result.status).toBe('compensated');
    expect(result.reason).toContain(FailureType.AuthorizationExpired);
    expect(result.refundId).toBeNull();
    const intent = await expectNothingCaptured(harness, order.orderId, order.sku);
    expect(intent?.cancellation_reason).toBe('abandoned');
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'voided' });
    // The deadline, not an attempt count, ended the capture: its last attempt failed it, with no timer.
    const history = await SagaHistory.of(started.handle);
    expect(history.activityEnding(ActivityId.capturePayment)).toBe('failed');
    expect(history.events.some((event) => event.timerStartedEventAttributes)).toBe(false);
    // The capture's key is fenced: nothing can capture after the saga gave up.
    const captureKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.capturePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toMatchObject({ state: 'failed' });
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated' });
  });

  it('row 18: Stripe lets the hold lapse (its clock moved past capture_before) while the capture waits: the capture is refused, nothing to void, the order compensated with AuthorizationExpired', async () => {
    const harness = defaults;
    const order = await harness.newOrder();
    const refused = harness.emulator.addFault({ kind: 'fail_before_execution', status: 500, method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 1 });
    const started = await harness.start(order);
    await untilFired(harness, refused.id, 1);
    // A week passes at Stripe before the capture's retry arrives.
    harness.emulator.advanceClock(WINDOW_MS + 60_000);

    const result = await started.handle.result();

    expect(result.status).toBe('compensated');
    expect(result.reason).toContain(FailureType.AuthorizationExpired);
    const intent = await expectNothingCaptured(harness, order.orderId, order.sku);
    // Cancelled by Stripe itself, not by the saga.
    expect(intent?.cancellation_reason).toBe('automatic');
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ state: 'expired' });
    const captureKey = deriveIdempotencyKey({ runId: started.runId, activityId: ActivityId.capturePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.capture', captureKey)).toMatchObject({ state: 'failed' });
  });
});
