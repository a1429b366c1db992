import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import type {
  ChargeOutcome,
  ChargePaymentInput,
  RefundPaymentInput,
  RefundResult,
  SettlePaymentInput,
} from '../../src/activities/types.js';
import type { OrderInput } from '../../src/domain/order-input.js';
import { readKey } from '../../src/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../../src/idempotency/idempotency-key.js';
import { recordOrder } from '../../src/orders/orders.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;
let activities: ReturnType<typeof createActivities>;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  activities = createActivities({ db: harness.db.pool, stripe: harness.stripe, settlementRecheckMs: 1_000 });
  harness.emulator.setAsyncSettleDelay(10 * 60_000);
});
afterAll(() => harness.close());

/** One order's run, with its activities run as Temporal would run them (one attempt each call). */
async function run(order: OrderInput) {
  const workflowId = `order-payment-${order.orderId}`;
  const runId = randomUUID();
  await recordOrder(harness.db.pool, order, workflowId);
  const inActivity = (activityId: string) => new MockActivityEnvironment({ activityId, workflowExecution: { workflowId, runId } });
  return {
    chargeKey: deriveIdempotencyKey({ runId, activityId: 'charge-payment' }),
    charge: () =>
      inActivity('charge-payment').run<[ChargePaymentInput], ChargeOutcome, typeof activities.chargePayment>(activities.chargePayment, {
        order,
        workflowId,
        originalRunId: runId,
      }),
    settle: (check: number) =>
      inActivity(`settle-payment-${check}`).run<[SettlePaymentInput], ChargeOutcome, typeof activities.settlePayment>(
        activities.settlePayment,
        { orderId: order.orderId, originalRunId: runId, chargeActivityId: 'charge-payment', trigger: { kind: 'recheck' } },
      ),
    refund: () =>
      inActivity('refund-payment').run<[RefundPaymentInput], RefundResult, typeof activities.refundPayment>(activities.refundPayment, {
        orderId: order.orderId,
        workflowId,
        originalRunId: runId,
        chargeActivityId: 'charge-payment',
      }),
  };
}

async function ledger(orderId: string) {
  const { rows } = await harness.db.pool.query<{ kind: string; amount_minor: number; stripe_object_id: string; idempotency_key: string }>(
    'select kind, amount_minor, stripe_object_id, idempotency_key from ledger_transactions where order_id = $1 order by id',
    [orderId],
  );
  return rows;
}

describe('the asynchronous charge is idempotent at every step', () => {
  it('a retried charge answers the same pending outcome from its key without calling Stripe; nothing is booked yet', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);

    const first = await saga.charge();
    const requestsAfterFirst = harness.emulator.counters().requests;
    const retried = await saga.charge();

    expect(first).toMatchObject({ status: 'processing', amount: order.amount, recheckAfterMs: 1_000 });
    expect(retried).toEqual(first);
    expect(harness.emulator.counters().requests).toBe(requestsAfterFirst);
    expect((await readKey(harness.db.pool, 'stripe.charge', saga.chargeKey))?.state).toBe('processing');
    expect(await ledger(order.orderId)).toEqual([]);
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toHaveLength(1);
  });

  it('settlement books the charge once under the charge key, however often it runs, and the charge then answers succeeded', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);
    const pending = await saga.charge();

    expect(await saga.settle(1)).toEqual(pending);
    expect(harness.emulator.settlePaymentIntent(pending.paymentIntentId)).toBe(true);
    const settled = await Promise.all([saga.settle(2), saga.settle(3)]);
    const again = await saga.settle(4);

    const expected = { status: 'succeeded', paymentIntentId: pending.paymentIntentId, amount: order.amount, currency: order.currency };
    expect(settled).toEqual([expected, expected]);
    expect(again).toEqual(expected);
    expect(await saga.charge()).toEqual(expected);
    expect(await ledger(order.orderId)).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: pending.paymentIntentId, idempotency_key: saga.chargeKey },
    ]);
    expect((await readKey(harness.db.pool, 'stripe.charge', saga.chargeKey))?.state).toBe('completed');
  });

  it('a compensation that meets a payment settled unseen books the charge, then refunds it: the ledger matches Stripe (I3)', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);
    const pending = await saga.charge();
    // Stripe settled it; neither the webhook nor a settlement reached our books.
    harness.emulator.settlePaymentIntent(pending.paymentIntentId);

    const refund = await saga.refund();

    expect(refund).toMatchObject({ paymentIntentId: pending.paymentIntentId, amount: order.amount, resolvedBy: 'ledger' });
    expect(refund.refundId).toMatch(/^re_/);
    expect((await ledger(order.orderId)).map((row) => [row.kind, row.stripe_object_id])).toEqual([['charge', pending.paymentIntentId]]);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.refunds.map((item) => item.id)).toEqual([refund.refundId]);
  });

  it('a compensation that meets a payment still processing cancels it, so it can never settle; nothing is booked or refunded', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const saga = await run(order);
    const pending = await saga.charge();

    const refund = await saga.refund();
    const retried = await saga.refund();

    expect(refund).toMatchObject({ refundId: null, resolvedBy: 'nothing-charged' });
    expect(retried).toEqual(refund);
    expect((await harness.stripe.paymentIntents.retrieve(pending.paymentIntentId)).status).toBe('canceled');
    expect(harness.emulator.settlePaymentIntent(pending.paymentIntentId)).toBe(false);
    expect(await ledger(order.orderId)).toEqual([]);
    expect((await readKey(harness.db.pool, 'stripe.charge', saga.chargeKey))?.state).toBe('failed');
    // A settlement after the compensation answers with the recorded decline, never a charge.
    await expect(saga.settle(1)).rejects.toMatchObject({ type: 'PaymentDeclined' });
  });
});
