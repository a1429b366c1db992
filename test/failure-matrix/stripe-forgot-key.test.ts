// Failure-matrix rows 9 and 19: a late retry after Stripe forgot the key adopts the hold or
// capture it finds by order, or fences the key when Stripe holds nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { FailureType } from '../../src/domain/failures.js';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

/**
 * Rows 9 and 19. The worker treats an authorization key pending for longer than this as one
 * Stripe may have forgotten.
 * In production it is 23 hours; here it is shorter than Temporal's first retry interval (1 s),
 * so the late retry of a test meets the same condition a retry a day later would.
 */
const STRIPE_KEY_RETENTION_MS = 500;
/** Past Stripe's 24 hours, on the emulator's clock. */
const PAST_STRIPE_RETENTION_MS = 25 * 60 * 60 * 1000;

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness({ deps: { stripeKeyRetentionMs: STRIPE_KEY_RETENTION_MS } });
});
afterAll(() => harness.close());

/** Waits until the fault rule has struck `times` times: the activity attempt that met it is over. */
async function untilFired(ruleId: string, times: number): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 10) {
    if ((harness.emulator.listFaults().find((rule) => rule.id === ruleId)?.fired ?? 0) >= times) return;
    await sleep(10);
  }
  throw new Error(`fault ${ruleId} did not fire ${times} time(s) within 30 s`);
}

async function keyRow(scope: 'stripe.authorize' | 'stripe.capture', key: string) {
  const { rows } = await harness.db.pool.query<{ state: string; attempts: number; result: Record<string, unknown> }>(
    `select state, attempts, result from activity_idempotency where scope = $1 and idempotency_key = $2`,
    [scope, key],
  );
  return rows[0];
}

async function ledgerRows(orderId: string) {
  const { rows } = await harness.db.pool.query<{ kind: string; stripe_object_id: string; amount_minor: number }>(
    'select kind, stripe_object_id, amount_minor from ledger_transactions where order_id = $1 order by id',
    [orderId],
  );
  return rows;
}

async function orderRow(orderId: string) {
  const { rows } = await harness.db.pool.query<{ status: string; status_reason: string | null; payment_intent_id: string | null }>(
    'select status, status_reason, payment_intent_id from orders where order_id = $1',
    [orderId],
  );
  return rows[0];
}

describe('failure matrix rows 9 and 19: Stripe has forgotten the key and a late retry arrives', () => {
  it('row 9 / I1 (Stripe placed the hold): the late retry is not re-sent; it finds the hold by order_id and adopts it — one hold, captured once, order completed', async () => {
    const order = await harness.newOrder();
    // Stripe places the hold, but neither the answer nor the SDK's retry of it comes back: the
    // key stays pending in Postgres and the outcome is unknown.
    const lost = harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 2 });
    const before = harness.emulator.counters();
    const started = await harness.start(order);
    const authorizationKey = `${started.runId}/${ActivityId.authorizePayment}`;

    await untilFired(lost.id, 2);
    expect(await keyRow('stripe.authorize', authorizationKey)).toMatchObject({ state: 'pending', attempts: 1 });
    // A day passes on Stripe's side before the retry arrives: Stripe no longer knows the key.
    harness.emulator.advanceClock(PAST_STRIPE_RETENTION_MS);
    const remembered = harness.emulator.state().accounts.flatMap((account) => account.idempotencyKeys).find((entry) => entry.key === authorizationKey);
    expect(remembered?.expiresAtMs).toBeLessThanOrEqual(harness.emulator.now());

    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', refundId: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toHaveLength(1);
    expect(stripe.succeeded.map((intent) => [intent.id, intent.amount_received])).toEqual([[result.paymentIntentId, order.amount]]);
    // The only replay is the SDK's dropped retry: the late activity attempt never re-sent the
    // forgotten key (a re-send would have placed a second hold, or been a replay counted here).
    expect(harness.emulator.counters().replays - before.replays).toBe(1);
    expect(await keyRow('stripe.authorize', authorizationKey)).toMatchObject({
      state: 'completed',
      attempts: 2,
      result: { paymentIntentId: result.paymentIntentId, amount: order.amount, status: 'requires_capture' },
    });
    expect(await ledgerRows(order.orderId)).toEqual([{ kind: 'charge', stripe_object_id: result.paymentIntentId, amount_minor: order.amount }]);
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: result.paymentIntentId });
    await harness.expectInvariants([order.orderId]);
  });

  it('row 9 / I1 + I6 (Stripe holds nothing): the late retry fences the key as PaymentAttemptExpired — no hold, order compensated with that reason, and no later attempt can hold', async () => {
    const order = await harness.newOrder();
    // The first attempt never reaches Stripe's execution: nothing is held, the key stays pending.
    const refused = harness.emulator.addFault({ kind: 'fail_before_execution', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 1 });
    const started = await harness.start(order);
    const authorizationKey = `${started.runId}/${ActivityId.authorizePayment}`;

    await untilFired(refused.id, 1);
    harness.emulator.advanceClock(PAST_STRIPE_RETENTION_MS);

    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'compensated', paymentIntentId: null, refundId: null });
    expect(result.reason).toContain(FailureType.PaymentAttemptExpired);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    expect(await keyRow('stripe.authorize', authorizationKey)).toMatchObject({
      state: 'failed',
      attempts: 2,
      result: { failure: FailureType.PaymentAttemptExpired, fenced: true },
    });
    expect(await ledgerRows(order.orderId)).toEqual([]);
    const row = await orderRow(order.orderId);
    expect(row).toMatchObject({ status: 'compensated', payment_intent_id: null });
    expect(row?.status_reason).toContain(FailureType.PaymentAttemptExpired);
    await harness.expectInvariants([order.orderId]);

    // An even later attempt under the fenced key answers the same failure without calling Stripe.
    const requestsBefore = harness.emulator.counters().requests;
    const { authorizePayment } = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    const late = await new MockActivityEnvironment({ activityId: ActivityId.authorizePayment }, { logger: new DefaultLogger('WARN') })
      .run(authorizePayment, { order, workflowId: workflowIdForOrder(order.orderId), originalRunId: started.runId })
      .catch((error: unknown) => error);
    expect(late).toMatchObject({ type: FailureType.PaymentAttemptExpired, nonRetryable: true });
    expect(harness.emulator.counters().requests).toBe(requestsBefore);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toEqual([]);
  });

  it('row 19 / I1: the capture committed but its answer was lost, and the retry arrives after Stripe forgot the capture key: Stripe refuses a second capture, the retry adopts the first — one capture, booked once', async () => {
    const order = await harness.newOrder();
    const lost = harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, count: 2 });
    const started = await harness.start(order);
    const captureKey = `${started.runId}/${ActivityId.capturePayment}`;

    await untilFired(lost.id, 2);
    expect(await keyRow('stripe.capture', captureKey)).toMatchObject({ state: 'pending', attempts: 1 });
    // Past Stripe's key retention, but well inside the hold's 7 days.
    harness.emulator.advanceClock(PAST_STRIPE_RETENTION_MS);
    const before = harness.emulator.counters();

    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', refundId: null });
    // The retry's capture was executed anew (the key was forgotten, so nothing was replayed) and
    // refused, since the PaymentIntent was already captured.
    expect(harness.emulator.counters().replays - before.replays).toBe(0);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.id, intent.status, intent.amount_received])).toEqual([[result.paymentIntentId, 'succeeded', order.amount]]);
    expect(await keyRow('stripe.capture', captureKey)).toMatchObject({
      state: 'completed',
      attempts: 2,
      result: { paymentIntentId: result.paymentIntentId, amountCaptured: order.amount, status: 'succeeded' },
    });
    expect(await ledgerRows(order.orderId)).toEqual([{ kind: 'charge', stripe_object_id: result.paymentIntentId, amount_minor: order.amount }]);
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: result.paymentIntentId });
    await harness.expectInvariants([order.orderId]);
  });
});
