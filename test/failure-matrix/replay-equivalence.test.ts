// Failure-matrix row 10: a replayed response, from Stripe or from the ledger in Postgres, is
// semantically equal to the first and moves no money again.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { recordOrder } from '../../src/orders/orders.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;

beforeAll(async () => {
  // The activities run directly in an activity context; no workflow, no worker.
  harness = await startSagaHarness({ worker: false });
});
afterAll(() => harness.close());

/** Runs one activity as a worker would, in an activity context carrying the given activity ID. */
function runActivity<A extends unknown[], R>(activityId: string, activity: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment({ activityId }, { logger: new DefaultLogger('WARN') }).run<A, R, typeof activity>(activity, ...args);
}

/** The fields a caller acts on: a replay that differs in any of them is not a replay. */
function essentials(intent: Stripe.PaymentIntent) {
  return { id: intent.id, amount: intent.amount, currency: intent.currency, status: intent.status, latest_charge: intent.latest_charge };
}

describe('failure matrix row 10: a replayed response is semantically equal to the first', () => {
  it('row 10 (Stripe): a PaymentIntent create replayed under its key has the same ID, amount, currency and status, and creates nothing', async () => {
    const orderId = `R10-${randomUUID().slice(0, 8)}`;
    const key = `${randomUUID()}/authorize-payment`;
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 4321,
      currency: 'eur',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { order_id: orderId },
    };
    const before = harness.emulator.counters();

    const first = await harness.stripe.paymentIntents.create(params, { idempotencyKey: key });
    const replayed = await harness.stripe.paymentIntents.create(params, { idempotencyKey: key });

    expect(first.status).toBe('succeeded');
    expect(essentials(replayed)).toEqual(essentials(first));
    expect(replayed).toEqual(first);
    expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(harness.emulator.counters().replays - before.replays).toBe(1);
    expect((await stripeObjectsFor(harness.stripe, orderId)).intents.map((intent) => intent.id)).toEqual([first.id]);
  });

  it('row 10 (Stripe): a Refund create replayed under its key has the same ID, amount, currency and status, and refunds once', async () => {
    const charge = await harness.stripe.paymentIntents.create({
      amount: 900,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    });
    const key = `${randomUUID()}/refund-capture`;

    const first = await harness.stripe.refunds.create({ payment_intent: charge.id, amount: 900 }, { idempotencyKey: key });
    const replayed = await harness.stripe.refunds.create({ payment_intent: charge.id, amount: 900 }, { idempotencyKey: key });

    expect([replayed.id, replayed.amount, replayed.currency, replayed.status]).toEqual([first.id, 900, 'usd', first.status]);
    expect(replayed).toEqual(first);
    expect(replayed.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect((await harness.stripe.refunds.list({ payment_intent: charge.id })).data.map((refund) => refund.id)).toEqual([first.id]);
  });

  it('row 10 (Stripe): a hold placed, then captured, each replayed under its key, answers the same and captures once', async () => {
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 2200,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      capture_method: 'manual',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    };
    const holdKey = `${randomUUID()}/authorize-payment`;
    const hold = await harness.stripe.paymentIntents.create(params, { idempotencyKey: holdKey });
    const replayedHold = await harness.stripe.paymentIntents.create(params, { idempotencyKey: holdKey });
    expect(hold.status).toBe('requires_capture');
    expect(replayedHold).toEqual(hold);

    const captureKey = `${randomUUID()}/capture-payment`;
    const captured = await harness.stripe.paymentIntents.capture(hold.id, { amount_to_capture: 2200 }, { idempotencyKey: captureKey });
    const replayedCapture = await harness.stripe.paymentIntents.capture(hold.id, { amount_to_capture: 2200 }, { idempotencyKey: captureKey });

    expect([captured.status, captured.amount_received]).toEqual(['succeeded', 2200]);
    expect(essentials(replayedCapture)).toEqual(essentials(captured));
    expect(replayedCapture.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it('row 10 (ledger): authorizePayment, capturePayment and refundCapture run twice under one key answer identically, the second time from Postgres without calling Stripe', async () => {
    const order = await harness.newOrder({ amount: 3100, currency: 'pln' });
    const workflowId = workflowIdForOrder(order.orderId);
    const originalRunId = randomUUID();
    await recordOrder(harness.db.pool, order, workflowId);
    const { authorizePayment, capturePayment, refundCapture } = createActivities({ db: harness.db.pool, stripe: harness.stripe });

    const firstHold = await runActivity(ActivityId.authorizePayment, authorizePayment, { order, workflowId, originalRunId });
    if (firstHold.status !== 'requires_capture') throw new Error(`expected a hold, got ${firstHold.status}`);
    const requestsAfterHold = harness.emulator.counters().requests;
    const replayedHold = await runActivity(ActivityId.authorizePayment, authorizePayment, { order, workflowId, originalRunId });

    // The same hold; only the time left to capture it has moved on.
    expect({ ...replayedHold, captureWithinMs: 0 }).toEqual({ ...firstHold, captureWithinMs: 0 });
    expect(firstHold).toMatchObject({ amount: 3100, currency: 'pln', status: 'requires_capture' });
    expect(harness.emulator.counters().requests).toBe(requestsAfterHold);
    const held = await harness.stripe.paymentIntents.retrieve(firstHold.paymentIntentId);
    expect([held.id, held.amount_capturable, held.currency, held.status]).toEqual([firstHold.paymentIntentId, 3100, 'pln', 'requires_capture']);

    const captureInput = { orderId: order.orderId, workflowId, originalRunId, hold: firstHold };
    const firstCapture = await runActivity(ActivityId.capturePayment, capturePayment, captureInput);
    const requestsAfterCapture = harness.emulator.counters().requests;
    const replayedCapture = await runActivity(ActivityId.capturePayment, capturePayment, captureInput);
    expect(replayedCapture).toEqual(firstCapture);
    expect(firstCapture).toEqual({ paymentIntentId: firstHold.paymentIntentId, amountCaptured: 3100, currency: 'pln', status: 'succeeded' });
    expect(harness.emulator.counters().requests).toBe(requestsAfterCapture);

    const refundInput = {
      orderId: order.orderId,
      workflowId,
      originalRunId,
      authorizationActivityId: ActivityId.authorizePayment,
      captureActivityId: ActivityId.capturePayment,
    };
    const firstRefund = await runActivity(ActivityId.refundCapture, refundCapture, refundInput);
    const requestsAfterRefund = harness.emulator.counters().requests;
    const replayedRefund = await runActivity(ActivityId.refundCapture, refundCapture, refundInput);

    expect(replayedRefund).toEqual(firstRefund);
    expect(firstRefund).toMatchObject({ paymentIntentId: firstHold.paymentIntentId, amount: 3100, currency: 'pln', resolvedBy: 'records' });
    expect(firstRefund.refundId).toMatch(/^re_/);
    expect(harness.emulator.counters().requests).toBe(requestsAfterRefund);

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded.map((paid) => paid.id)).toEqual([firstHold.paymentIntentId]);
    expect(stripe.refunds.map((refund) => [refund.id, refund.amount])).toEqual([[firstRefund.refundId, 3100]]);
    const { rows } = await harness.db.pool.query<{ kind: string; stripe_object_id: string; amount_minor: number; currency: string }>(
      'select kind, stripe_object_id, amount_minor, currency from ledger_transactions where order_id = $1 order by id',
      [order.orderId],
    );
    expect(rows).toEqual([
      { kind: 'charge', stripe_object_id: firstHold.paymentIntentId, amount_minor: 3100, currency: 'pln' },
      { kind: 'refund', stripe_object_id: firstRefund.refundId, amount_minor: 3100, currency: 'pln' },
    ]);
  });
});
