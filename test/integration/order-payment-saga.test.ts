import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setStock } from '../../src/inventory/stock.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

async function orderRow(orderId: string) {
  const { rows } = await harness.db.pool.query<{ status: string; status_reason: string | null; payment_intent_id: string | null; refund_id: string | null }>(
    'select status, status_reason, payment_intent_id, refund_id from orders where order_id = $1',
    [orderId],
  );
  return rows[0];
}

async function available(sku: string) {
  const { rows } = await harness.db.pool.query<{ available: number }>('select available from inventory where sku = $1', [sku]);
  return rows[0]?.available;
}

describe('orderPaymentSaga', () => {
  it('completes an order: one charge, one ledger charge, stock taken, no refund', async () => {
    const order = await harness.newOrder({ quantity: 3 });
    const started = await harness.start(order);
    expect(started.outcome).toBe('started');
    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', orderId: order.orderId, refundId: null, reason: null });
    expect(result.paymentIntentId).toMatch(/^pi_/);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded.map((intent) => intent.id)).toEqual([result.paymentIntentId]);
    expect(stripe.succeeded[0]?.metadata).toMatchObject({ order_id: order.orderId, activity_id: 'charge-payment' });
    expect(stripe.refunds).toEqual([]);
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'completed', payment_intent_id: result.paymentIntentId });
    expect(await available(order.sku)).toBe(7);
    const status = await started.handle.query('status');
    expect(status).toMatchObject({ step: 'done', orderStatus: 'completed', paymentIntentId: result.paymentIntentId });
    await harness.expectInvariants([order.orderId]);
  });

  it('ends a declined card as declined: no ledger charge, no refund, stock untouched', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
    const result = await (await harness.start(order)).handle.result();

    expect(result).toMatchObject({ status: 'declined', reason: 'insufficient_funds', refundId: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    const { rows } = await harness.db.pool.query('select 1 from ledger_transactions where order_id = $1', [order.orderId]);
    expect(rows).toEqual([]);
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'declined', status_reason: 'insufficient_funds' });
    expect(await available(order.sku)).toBe(10);
    await harness.expectInvariants([order.orderId]);
  });

  it('compensates out of stock after the charge: one refund, the ledger reversed, stock untouched', async () => {
    const order = await harness.newOrder({ quantity: 11 });
    const result = await (await harness.start(order)).handle.result();

    expect(result.status).toBe('compensated');
    expect(result.reason).toContain('OutOfStock');
    expect(result.refundId).toMatch(/^re_/);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded).toHaveLength(1);
    expect(stripe.refunds.map((refund) => [refund.id, refund.amount])).toEqual([[result.refundId, order.amount]]);
    const { rows } = await harness.db.pool.query<{ kind: string; amount_minor: number; stripe_object_id: string }>(
      'select kind, amount_minor, stripe_object_id from ledger_transactions where order_id = $1 order by id',
      [order.orderId],
    );
    expect(rows).toEqual([
      { kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId },
      { kind: 'refund', amount_minor: order.amount, stripe_object_id: result.refundId },
    ]);
    expect(await available(order.sku)).toBe(10);
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'compensated', refund_id: result.refundId });
    await harness.expectInvariants([order.orderId]);
  });

  it('lets exactly one of several concurrent orders have the last unit; the others are refunded', async () => {
    const sku = `last-unit-${Date.now()}`;
    await setStock(harness.db.pool, sku, 1);
    const orders = await Promise.all(Array.from({ length: 4 }, () => harness.newOrder({ sku })));
    const results = await Promise.all(orders.map(async (order) => (await harness.start(order)).handle.result()));

    expect(results.filter((result) => result.status === 'completed')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'compensated')).toHaveLength(3);
    expect(await available(sku)).toBe(0);
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
    expect(await orderRow(order.orderId)).toBeUndefined();
  });
});
