// Proves the outbox rows are written in the transactions that change an order: the right events,
// in order, once each, and never again on a replayed or refused write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { outboxEvents } from '../support/order-state.js';
import { announceOrderPaid, announceOrderRefunded } from '../../src/messaging/outbox/order-events.js';
import { refuseCompletion } from '../support/refuse-completion.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { SagaHistory } from '../support/workflow-history.js';

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

const outboxFor = (orderId: string) => outboxEvents(harness.db.pool, orderId);

describe('outbox rows are written with the transactions that change an order', () => {
  it('a completed order announces order.paid once, with the charge it made', async () => {
    const order = await harness.newOrder();
    const result = await (await harness.start(order)).handle.result();
    expect(result.status).toBe('completed');

    const events = await outboxFor(order.orderId);
    expect(events.map((event) => event.event_type)).toEqual(['order.paid']);
    expect(events[0]?.payload).toEqual({
      event_type: 'order.paid',
      order_id: order.orderId,
      status: 'paid',
      amount_minor: order.amount,
      currency: order.currency,
      payment_intent_id: result.paymentIntentId,
      refund_id: null,
      reason: null,
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
    });
  });

  it('an order compensated after its capture announces order.paid, order.refunded and order.failed, in that order', async () => {
    const order = await harness.newOrder();
    await refuseCompletion(harness.db.pool, { orderId: order.orderId });
    const result = await (await harness.start(order)).handle.result();
    expect(result.status).toBe('compensated');

    const events = await outboxFor(order.orderId);
    expect(events.map((event) => event.event_type)).toEqual(['order.paid', 'order.refunded', 'order.failed']);
    expect(events[1]?.payload).toMatchObject({
      status: 'compensating',
      amount_minor: order.amount,
      currency: order.currency,
      payment_intent_id: result.paymentIntentId,
      refund_id: result.refundId,
    });
    expect(events[2]?.payload).toMatchObject({
      status: 'compensated',
      payment_intent_id: result.paymentIntentId,
      refund_id: result.refundId,
      reason: result.reason,
    });
    expect(result.reason).toContain('OrderNotConfirmable');
  });

  it('an order compensated before its capture announces only order.failed: a hold is not money, and a void moves none', async () => {
    const order = await harness.newOrder({ quantity: 11 });
    const result = await (await harness.start(order)).handle.result();
    expect(result.status).toBe('compensated');

    const events = await outboxFor(order.orderId);
    expect(events.map((event) => event.event_type)).toEqual(['order.failed']);
    expect(events[0]?.payload).toMatchObject({ status: 'compensated', payment_intent_id: null, refund_id: null, reason: result.reason });
    expect(result.reason).toContain('OutOfStock');
  });

  it('a declined order announces order.failed once, though both the charge and the closing step write it', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_visa_chargeDeclinedInsufficientFunds' });
    const started = await harness.start(order);
    const result = await started.handle.result();
    expect(result.status).toBe('declined');

    // Both writers ran: the charge's decline transaction and the saga's setOrderStatus step.
    // setOrderStatus is a local activity: a marker in the history.
    const closes = (await SagaHistory.of(started.handle)).localActivities('setOrderStatus');
    expect(closes).toHaveLength(1);
    const events = await outboxFor(order.orderId);
    expect(events.map((event) => event.event_type)).toEqual(['order.failed']);
    expect(events[0]?.payload).toMatchObject({ status: 'declined', reason: 'insufficient_funds', amount_minor: order.amount });
  });

  it('a replayed or refused write never announces twice, and the first payload stands', async () => {
    const order = await harness.newOrder();
    const result = await (await harness.start(order)).handle.result();
    expect(result.status).toBe('completed');
    const before = await outboxFor(order.orderId);
    const activities = createActivities({ db: harness.db.pool, stripe: harness.stripe });

    // A replayed charge record arrives late, with other values.
    const replayed = await withTransaction(harness.db.pool, async (client) => [
      await announceOrderPaid(client, order.orderId, { amountMinor: 1, currency: 'eur', paymentIntentId: 'pi_other' }),
      await announceOrderPaid(client, order.orderId, { amountMinor: 1, currency: 'eur', paymentIntentId: 'pi_other' }),
    ]);
    expect(replayed).toEqual([false, false]);
    // A late close of a completed order is refused by the status rules: no order.failed.
    await activities.setOrderStatus({ orderId: order.orderId, status: 'declined', reason: 'late' });
    await activities.setOrderStatus({ orderId: order.orderId, status: 'needs_review', reason: 'late' });
    expect(await outboxFor(order.orderId)).toEqual(before);

    // Written twice in two transactions, as a retried activity would: one row.
    const refund = { amountMinor: order.amount, currency: order.currency, refundId: 're_replayed', paymentIntentId: result.paymentIntentId };
    const first = await withTransaction(harness.db.pool, (client) => announceOrderRefunded(client, order.orderId, refund));
    const second = await withTransaction(harness.db.pool, (client) => announceOrderRefunded(client, order.orderId, refund));
    expect([first, second]).toEqual([true, false]);
    expect((await outboxFor(order.orderId)).map((event) => event.event_type)).toEqual(['order.paid', 'order.refunded']);
  });
});
