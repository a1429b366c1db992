// Proves the asynchronous authorization is idempotent at every step: retries, settlement and voids
// each act once under their keys, and a voided settling payment can never become a hold.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { readKey } from '../../src/money/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { recordOrder } from '../../src/orders/orders.js';
import { ledgerTransactions, paymentHold } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;
let activities: ReturnType<typeof createActivities>;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  activities = createActivities({ db: harness.db.pool, stripe: harness.stripe, settlementRecheckMs: 1_000 });
  harness.emulator.setAsyncSettleDelay(10 * 60_000);
});
afterAll(() => harness.close());

/** Runs one activity as a worker would, in an activity context carrying its explicit ID. */
function runIn<A extends unknown[], R>(ids: { activityId: string; workflowId: string; runId: string }, activity: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment({ activityId: ids.activityId, workflowExecution: { workflowId: ids.workflowId, runId: ids.runId } }).run<A, R, typeof activity>(activity, ...args);
}

/** One order's run, with its activities run as Temporal would run them (one attempt each call). */
async function run(order: OrderInput) {
  const workflowId = `order-payment-${order.orderId}`;
  const runId = randomUUID();
  await recordOrder(harness.db.pool, order, workflowId);
  const ids = (activityId: string) => ({ activityId, workflowId, runId });
  return {
    authorizationKey: deriveIdempotencyKey({ runId, activityId: ActivityId.authorizePayment }),
    authorize: () => runIn(ids(ActivityId.authorizePayment), activities.authorizePayment, { order, workflowId, originalRunId: runId }),
    settle: (check: number) =>
      runIn(ids(`${ActivityId.settleAuthorization}-${check}`), activities.settleAuthorization, {
        orderId: order.orderId,
        originalRunId: runId,
        authorizationActivityId: ActivityId.authorizePayment,
        trigger: { kind: 'recheck' },
      }),
    void: () =>
      runIn(ids(ActivityId.voidAuthorization), activities.voidAuthorization, {
        orderId: order.orderId,
        workflowId,
        originalRunId: runId,
        authorizationActivityId: ActivityId.authorizePayment,
        captureActivityId: ActivityId.capturePayment,
        reason: 'cancelled',
      }),
  };
}

/** An answer with the time left to capture set aside: it moves on between two calls. */
function sansClock<T extends object>(outcome: T): T {
  return 'captureWithinMs' in outcome ? { ...outcome, captureWithinMs: 0 } : outcome;
}

describe('the asynchronous authorization is idempotent at every step', () => {
  it('a retried authorization answers the same settling outcome from its key without calling Stripe; nothing is held or booked yet', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);

    const first = await saga.authorize();
    const requestsAfterFirst = harness.emulator.counters().requests;
    const retried = await saga.authorize();

    expect(first).toMatchObject({ status: 'processing', amount: order.amount, recheckAfterMs: 1_000 });
    expect(retried).toEqual(first);
    expect(harness.emulator.counters().requests).toBe(requestsAfterFirst);
    expect((await readKey(harness.db.pool, 'stripe.authorize', saga.authorizationKey))?.state).toBe('processing');
    expect(await paymentHold(harness.db.pool, order.orderId)).toBeUndefined();
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toHaveLength(1);
  });

  it('settlement records the hold once under the authorization key, however often it runs, and the authorization then answers held; nothing is booked', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);
    const pending = await saga.authorize();

    expect(await saga.settle(1)).toEqual(pending);
    expect(harness.emulator.settlePaymentIntent(pending.paymentIntentId)).toBe(true);
    const settled = await Promise.all([saga.settle(2), saga.settle(3)]);
    const again = await saga.settle(4);

    const expected = { status: 'requires_capture', paymentIntentId: pending.paymentIntentId, amount: order.amount, currency: order.currency };
    expect(settled.map(sansClock)).toEqual([expect.objectContaining(expected), expect.objectContaining(expected)]);
    expect(again).toMatchObject(expected);
    expect(await saga.authorize()).toMatchObject(expected);
    expect(await paymentHold(harness.db.pool, order.orderId)).toMatchObject({ payment_intent_id: pending.paymentIntentId, state: 'held' });
    // A hold is not money: the ledger waits for the capture.
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect((await readKey(harness.db.pool, 'stripe.authorize', saga.authorizationKey))?.state).toBe('completed');
  });

  it('a void that meets an authorization settled unseen voids the hold Stripe placed: nothing captured, nothing booked', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);
    const pending = await saga.authorize();
    // Stripe placed the hold; neither the webhook nor a settlement reached our records.
    harness.emulator.settlePaymentIntent(pending.paymentIntentId);

    const voided = await saga.void();

    expect(voided).toEqual({ paymentIntentId: pending.paymentIntentId, outcome: 'voided', resolvedBy: 'records' });
    expect((await harness.stripe.paymentIntents.retrieve(pending.paymentIntentId)).status).toBe('canceled');
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).refunds).toEqual([]);
  });

  it('a void that meets an authorization still processing cancels it, so it can never settle; the authorization then answers a decline, never a hold', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);
    const pending = await saga.authorize();

    const voided = await saga.void();
    const retried = await saga.void();

    expect(voided).toEqual({ paymentIntentId: pending.paymentIntentId, outcome: 'voided', resolvedBy: 'records' });
    expect(retried).toEqual(voided);
    expect((await harness.stripe.paymentIntents.retrieve(pending.paymentIntentId)).status).toBe('canceled');
    expect(harness.emulator.settlePaymentIntent(pending.paymentIntentId)).toBe(false);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect((await readKey(harness.db.pool, 'stripe.authorize', saga.authorizationKey))?.state).toBe('failed');
    await expect(saga.settle(1)).rejects.toMatchObject({ type: 'PaymentDeclined' });
  });
});
