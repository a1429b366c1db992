import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { deriveIdempotencyKey } from '../../src/idempotency/idempotency-key.js';
import { availableStock, keyRecord, ledgerTransactions, orderRow, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { endingOf } from '../support/workflow-ending.js';

/**
 * Row 8: the workflow is cancelled while the charge is in flight. The charge activity waits
 * for its attempt to finish before the saga compensates, and the refund resolves whatever the
 * charge did: never a charge without a refund.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

const STOCKED = 10;

describe('failure matrix row 8: the workflow is cancelled while the charge is in flight', () => {
  it('row 8: cancelled while Stripe is executing the charge: the charge lands and is refunded once, the run ends cancelled', async () => {
    const order = await harness.newOrder();
    harness.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, latencyMs: 5_000 });
    const { handle } = await harness.start(order);
    // The charge request has reached Stripe and is being held there.
    await vi.waitFor(() => {
      expect(harness.emulator.counters().faults.latency).toBe(1);
    }, { timeout: 30_000, interval: 50 });
    await handle.cancel();

    expect(await endingOf(handle)).toEqual({ ended: 'cancelled' });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded).toHaveLength(1);
    const charge = stripe.succeeded[0];
    expect(stripe.refunds.map((refund) => [refund.payment_intent, refund.amount, refund.status])).toEqual([
      [charge?.id, order.amount, 'succeeded'],
    ]);
    const refundId = stripe.refunds[0]?.id;
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: charge?.id },
      { kind: 'refund', amount_minor: order.amount, stripe_object_id: refundId },
    ]);
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', status_reason: 'cancelled', refund_id: refundId });
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
    await harness.expectInvariants([order.orderId]);
  });

  it('row 8: cancelled while Stripe keeps failing the charge before executing it: no charge, nothing refunded, the charge key fenced', async () => {
    const order = await harness.newOrder();
    harness.emulator.addFault({
      kind: 'fail_before_execution',
      status: 500,
      method: 'POST',
      path: '/v1/payment_intents',
      orderId: order.orderId,
      count: 1_000,
    });
    const { handle, runId } = await harness.start(order);
    // Temporal has retried the charge at least once: it is between attempts or in one.
    await vi.waitFor(() => {
      expect(harness.emulator.counters().faults.fail_before_execution).toBeGreaterThanOrEqual(2);
    }, { timeout: 30_000, interval: 50 });
    await handle.cancel();

    // The cancel may land between attempts or during a failing one: the run ends cancelled either way.
    expect(await endingOf(handle)).toEqual({ ended: 'cancelled' });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    // The refund found no charge and closed the charge key, so no late attempt can charge.
    const chargeKey = deriveIdempotencyKey({ runId, activityId: ActivityId.chargePayment });
    expect(await keyRecord(harness.db.pool, 'stripe.charge', chargeKey)).toMatchObject({ state: 'failed' });
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({
      status: 'compensated',
      status_reason: 'cancelled',
      payment_intent_id: null,
      refund_id: null,
    });
    expect(await availableStock(harness.db.pool, order.sku)).toBe(STOCKED);
    await harness.expectInvariants([order.orderId]);
  });
});
