// Proves the saga's main paths end to end: a completed order, a declined card, an order out of
// stock, a race for the last unit, and an invalid input that touches nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { setStock } from '../../src/orders/stock.js';
import { availableStock, ledgerTransactions, orderRow, paymentHold, stockAllocations } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

describe('orderPaymentSaga: hold, then capture', () => {
  it('completes an order: a hold on the card, stock reserved, the hold captured, one ledger charge for what was captured, no refund', async () => {
    const order = await harness.newOrder({ quantity: 3 });
    const started = await harness.start(order);
    expect(started.outcome).toBe('started');
    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', orderId: order.orderId, refundId: null, reason: null });
    expect(result.paymentIntentId).toMatch(/^pi_/);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toHaveLength(1);
    const [intent] = stripe.succeeded;
    expect(intent).toMatchObject({
      id: result.paymentIntentId,
      capture_method: 'manual',
      amount_received: order.amount,
      amount_capturable: 0,
      metadata: { order_id: order.orderId, activity_id: ActivityId.authorizePayment, run_id: started.runId },
    });
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId },
    ]);
    expect(await paymentHold(harness.db.pool, order.orderId)).toEqual({
      payment_intent_id: result.paymentIntentId,
      state: 'captured',
      amount_authorized: order.amount,
      amount_captured: order.amount,
    });
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: result.paymentIntentId });
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: 3, state: 'allocated' }]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(7);
    const status = await started.handle.query('status');
    expect(status).toMatchObject({
      step: 'done',
      orderStatus: 'completed',
      paymentIntentId: result.paymentIntentId,
      paymentOutcome: { status: 'authorized', paymentIntentId: result.paymentIntentId },
    });
    await harness.expectInvariants([order.orderId]);
  });

  it('ends a declined card as declined: the reservation released, nothing held, no ledger entry, no refund', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
    const { handle } = await harness.start(order);
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'declined', reason: 'insufficient_funds', refundId: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => intent.status)).toEqual(['requires_payment_method']);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect(await paymentHold(harness.db.pool, order.orderId)).toBeUndefined();
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'declined', status_reason: 'insufficient_funds' });
    expect(await stockAllocations(harness.db.pool, order.orderId)).toEqual([{ quantity: 1, state: 'released' }]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(10);
    expect(await handle.query('status')).toMatchObject({ paymentOutcome: { status: 'declined', declineCode: 'insufficient_funds' } });
    await harness.expectInvariants([order.orderId]);
  });

  it('compensates an order that cannot be filled before Stripe is called: no hold, no charge, no refund', async () => {
    const order = await harness.newOrder({ quantity: 11 });
    const before = harness.emulator.counters().requests;
    const { handle } = await harness.start(order);
    const result = await handle.result();

    expect(result.status).toBe('compensated');
    expect(result.reason).toContain('OutOfStock');
    expect(result.refundId).toBeNull();
    // Reserved first, so Stripe never heard of this order.
    expect(harness.emulator.counters().requests).toBe(before);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([]);
    expect(await availableStock(harness.db.pool, order.sku)).toBe(10);
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'compensated', refund_id: null, payment_intent_id: null });
    expect(await handle.query('status')).toMatchObject({ paymentOutcome: { status: 'out_of_stock' } });
    await harness.expectInvariants([order.orderId]);
  });

  it('lets exactly one of several concurrent orders have the last unit; the others never reach Stripe', async () => {
    const sku = `last-unit-${Date.now()}`;
    await setStock(harness.db.pool, sku, 1);
    const orders = await Promise.all(Array.from({ length: 4 }, () => harness.newOrder({ sku })));
    const results = await Promise.all(orders.map(async (order) => (await harness.start(order)).handle.result()));

    const winner = results.filter((result) => result.status === 'completed');
    expect(winner).toHaveLength(1);
    expect(results.filter((result) => result.status === 'compensated')).toHaveLength(3);
    expect(await availableStock(harness.db.pool, sku)).toBe(0);
    for (const [index, order] of orders.entries()) {
      const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
      // The losers were never charged, so there is nothing to refund: no refund row at all.
      expect(stripe.refunds).toEqual([]);
      expect(stripe.intents).toHaveLength(results[index]?.status === 'completed' ? 1 : 0);
    }
    await harness.expectInvariants(orders.map((order) => order.orderId));
  });

  it('validates its own input: a bad order fails the workflow and touches nothing', async () => {
    const order = await harness.newOrder();
    const handle = await harness.client.workflow.start('orderPaymentSaga', {
      workflowId: `order-payment-${order.orderId}`,
      taskQueue: harness.taskQueue,
      args: [{ ...order, amount: -5 }],
    });
    await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'InvalidOrderInput' } });
    expect(await orderRow(harness.db.pool, order.orderId)).toBeUndefined();
  });
});
