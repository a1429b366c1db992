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
 * The worker treats a charge key pending for longer than this as one Stripe may have forgotten.
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

async function chargeKeyRow(key: string) {
  const { rows } = await harness.db.pool.query<{ state: string; attempts: number; result: Record<string, unknown> }>(
    `select state, attempts, result from activity_idempotency where scope = 'stripe.charge' and idempotency_key = $1`,
    [key],
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

describe('failure matrix row 9: Stripe has forgotten the key and a late retry arrives', () => {
  it('row 9 / I1 (Stripe charged): the late retry is not re-sent; it finds the charge by order_id and adopts it — one charge, order completed, one ledger charge', async () => {
    const order = await harness.newOrder();
    // Stripe charges, but neither the answer nor the SDK's retry of it comes back: the key stays
    // pending in Postgres and the outcome is unknown.
    const lost = harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 2 });
    const before = harness.emulator.counters();
    const started = await harness.start(order);
    const chargeKey = `${started.runId}/${ActivityId.chargePayment}`;

    await untilFired(lost.id, 2);
    expect(await chargeKeyRow(chargeKey)).toMatchObject({ state: 'pending', attempts: 1 });
    // A day passes on Stripe's side before the retry arrives: Stripe no longer knows the key.
    harness.emulator.advanceClock(PAST_STRIPE_RETENTION_MS);
    const remembered = harness.emulator.state().accounts.flatMap((account) => account.idempotencyKeys).find((entry) => entry.key === chargeKey);
    expect(remembered?.expiresAtMs).toBeLessThanOrEqual(harness.emulator.now());

    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', refundId: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toHaveLength(1);
    expect(stripe.succeeded.map((intent) => intent.id)).toEqual([result.paymentIntentId]);
    // The only replay is the SDK's dropped retry: the late activity attempt never re-sent the
    // forgotten key (a re-send would have been a new charge, or a replay counted here).
    expect(harness.emulator.counters().replays - before.replays).toBe(1);
    expect(await chargeKeyRow(chargeKey)).toMatchObject({
      state: 'completed',
      attempts: 2,
      result: { paymentIntentId: result.paymentIntentId, amount: order.amount, status: 'succeeded' },
    });
    expect(await ledgerRows(order.orderId)).toEqual([{ kind: 'charge', stripe_object_id: result.paymentIntentId, amount_minor: order.amount }]);
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: result.paymentIntentId });
    await harness.expectInvariants([order.orderId]);
  });

  it('row 9 / I1 + I6 (Stripe holds nothing): the late retry fences the key as ChargeAttemptExpired — no charge, order compensated with that reason, and no later attempt can charge', async () => {
    const order = await harness.newOrder();
    // The first attempt never reaches Stripe's execution: nothing is charged, the key stays pending.
    const refused = harness.emulator.addFault({ kind: 'fail_before_execution', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 1 });
    const started = await harness.start(order);
    const chargeKey = `${started.runId}/${ActivityId.chargePayment}`;

    await untilFired(refused.id, 1);
    harness.emulator.advanceClock(PAST_STRIPE_RETENTION_MS);

    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'compensated', paymentIntentId: null, refundId: null });
    expect(result.reason).toContain(FailureType.ChargeAttemptExpired);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    expect(await chargeKeyRow(chargeKey)).toMatchObject({
      state: 'failed',
      attempts: 2,
      result: { failure: FailureType.ChargeAttemptExpired, fenced: true },
    });
    expect(await ledgerRows(order.orderId)).toEqual([]);
    const row = await orderRow(order.orderId);
    expect(row).toMatchObject({ status: 'compensated', payment_intent_id: null });
    expect(row?.status_reason).toContain(FailureType.ChargeAttemptExpired);
    await harness.expectInvariants([order.orderId]);

    // An even later attempt under the fenced key answers the same failure without calling Stripe.
    const requestsBefore = harness.emulator.counters().requests;
    const { chargePayment } = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    const late = await new MockActivityEnvironment({ activityId: ActivityId.chargePayment }, { logger: new DefaultLogger('WARN') })
      .run(chargePayment, { order, workflowId: workflowIdForOrder(order.orderId), originalRunId: started.runId })
      .catch((error: unknown) => error);
    expect(late).toMatchObject({ type: FailureType.ChargeAttemptExpired, nonRetryable: true });
    expect(harness.emulator.counters().requests).toBe(requestsBefore);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toEqual([]);
  });
});
