// Proves the saga's asynchronous payment path: settled by the webhook signal (once, even when
// duplicated or reordered), or by rechecking Stripe when no webhook comes; cancels and deadlines too.
import { CancelledFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OrderInput } from '../../src/domain/order-input.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startApi, WEBHOOK_SECRET, type RunningApi } from '../support/webhooks.js';

/** Activity IDs the run scheduled, in order, and the signals it received. */
async function historyOf(handle: WorkflowHandle) {
  const { events } = await handle.fetchHistory();
  return {
    activities: (events ?? []).flatMap((event) => event.activityTaskScheduledEventAttributes?.activityId ?? []),
    signals: (events ?? []).flatMap((event) => event.workflowExecutionSignaledEventAttributes?.signalName ?? []),
    timers: (events ?? []).filter((event) => event.timerStartedEventAttributes).length,
  };
}

async function orderRow(harness: SagaHarness, orderId: string) {
  const { rows } = await harness.db.pool.query<{ status: string; status_reason: string | null; payment_intent_id: string | null }>(
    'select status, status_reason, payment_intent_id from orders where order_id = $1',
    [orderId],
  );
  return rows[0];
}

async function ledgerOf(harness: SagaHarness, orderId: string) {
  const { rows } = await harness.db.pool.query<{ kind: string; amount_minor: number; stripe_object_id: string }>(
    'select kind, amount_minor, stripe_object_id from ledger_transactions where order_id = $1 order by id',
    [orderId],
  );
  return rows;
}

/** The state of the order's authorization key (the order's one payment key). */
async function authorizationKeyState(harness: SagaHarness, orderId: string) {
  const { rows } = await harness.db.pool.query<{ state: string }>(
    `select k.state from activity_idempotency k join orders o on o.charge_key = k.idempotency_key
      where k.scope = 'stripe.authorize' and o.order_id = $1`,
    [orderId],
  );
  return rows[0]?.state;
}

async function stockOf(harness: SagaHarness, orderId: string) {
  const { rows } = await harness.db.pool.query<{ state: string }>('select state from stock_allocations where order_id = $1', [orderId]);
  return rows.map((row) => row.state);
}

async function awaitingPayment(handle: WorkflowHandle): Promise<void> {
  await vi.waitFor(
    async () => {
      expect(await handle.query('status')).toMatchObject({ step: 'awaiting-payment' });
    },
    { timeout: 20_000, interval: 100 },
  );
}

describe('async payment path, webhook configured (the saga would not ask Stripe for 10 minutes)', () => {
  let harness: SagaHarness;
  let api: RunningApi;

  beforeAll(async () => {
    harness = await startSagaHarness({ deps: { settlementRecheckMs: 10 * 60_000 } });
    api = await startApi({ db: harness.db.pool, client: harness.client });
    harness.emulator.addWebhookEndpoint({ url: api.webhookUrl, secret: WEBHOOK_SECRET });
    harness.emulator.configureWebhookDelivery({ retryInitialMs: 50 });
    harness.emulator.setAsyncSettleDelay(500);
  });
  afterAll(async () => {
    await harness.stopWorker();
    await api.close();
    await harness.close();
  });

  it('captures an authorization that settled later, once the webhook signal arrives: settled once, one hold, captured and booked once', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const { handle } = await harness.start(order);
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', refundId: null, reason: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded.map((intent) => [intent.id, intent.amount_received])).toEqual([[result.paymentIntentId, order.amount]]);
    expect(stripe.intents).toHaveLength(1);
    expect(await ledgerOf(harness, order.orderId)).toEqual([{ kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId }]);
    expect(await authorizationKeyState(harness, order.orderId)).toBe('completed');
    // Woken by the signal, not by the ten-minute recheck: one settlement, right after it.
    const history = await historyOf(handle);
    expect(history.signals).toContain('paymentEvent');
    // The Stripe steps are activities; record-and-reserve and the confirmation are local activities (markers).
    expect(history.activities).toEqual(['authorize-payment', 'settle-authorization-1', 'capture-payment']);
    await harness.expectInvariants([order.orderId]);
  });

  it('ends an asynchronous failure declined, like a synchronous decline: nothing booked, nothing refunded, the reservation released', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_fail' });
    const result = await (await harness.start(order)).handle.result();

    expect(result).toMatchObject({ status: 'declined', reason: 'insufficient_funds', refundId: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerOf(harness, order.orderId)).toEqual([]);
    expect(await orderRow(harness, order.orderId)).toMatchObject({ status: 'declined', status_reason: 'insufficient_funds' });
    expect(await stockOf(harness, order.orderId)).toEqual(['released']);
    await harness.expectInvariants([order.orderId]);
  });

  it('settles once when the webhook is delivered twice and out of order', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    harness.emulator.addFault({ kind: 'webhook_duplicate', eventType: 'payment_intent.amount_capturable_updated', orderId: order.orderId, copies: 2 });
    // The processing event arrives well after the success it precedes.
    harness.emulator.addFault({ kind: 'webhook_delay', eventType: 'payment_intent.processing', orderId: order.orderId, delayMs: 2_000 });
    const { handle } = await harness.start(order);
    const result = await handle.result();
    await harness.emulator.webhooksIdle();

    expect(result.status).toBe('completed');
    expect((await historyOf(handle)).activities.filter((id) => id.startsWith('settle-authorization'))).toEqual(['settle-authorization-1']);
    expect(await ledgerOf(harness, order.orderId)).toHaveLength(1);
    const { rows } = await harness.db.pool.query<{ event_type: string; applied: boolean }>(
      'select event_type, applied from stripe_webhook_events where order_id = $1 and event_type like $2 order by event_type',
      [order.orderId, 'payment_intent.%'],
    );
    // Three deliveries of the hold, one receipt; the late processing event is kept, not applied.
    expect(rows).toContainEqual({ event_type: 'payment_intent.amount_capturable_updated', applied: true });
    expect(rows.filter((row) => row.event_type === 'payment_intent.amount_capturable_updated')).toHaveLength(1);
    expect(rows).toContainEqual({ event_type: 'payment_intent.processing', applied: false });
    await harness.expectInvariants([order.orderId]);
  });

  it('cancelled while the authorization settles: the PaymentIntent is cancelled, nothing is held or captured, the order is compensated', async () => {
    harness.emulator.setAsyncSettleDelay(10 * 60_000);
    let order: OrderInput;
    let handle: WorkflowHandle;
    try {
      order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
      const started = await harness.start(order);
      handle = started.handle;
      await awaitingPayment(handle);
      await handle.cancel();
      const failure: unknown = await handle.result().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    } finally {
      harness.emulator.setAsyncSettleDelay(500);
    }

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => intent.status)).toEqual(['canceled']);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerOf(harness, order.orderId)).toEqual([]);
    expect(await orderRow(harness, order.orderId)).toMatchObject({ status: 'compensated' });
    expect(await stockOf(harness, order.orderId)).toEqual(['released']);
    // The PaymentIntent can no longer settle: no later webhook or retry can hold or charge this order.
    expect(harness.emulator.settlePaymentIntent(stripe.intents[0]?.id ?? '')).toBe(false);
    await harness.expectInvariants([order.orderId]);
  });
});

describe('async payment path, no webhook ever arrives (no endpoint registered)', () => {
  let harness: SagaHarness;

  beforeAll(async () => {
    harness = await startSagaHarness({ deps: { settlementRecheckMs: 1_000, authenticationDeadlineMs: 1_500 } });
    harness.emulator.setAsyncSettleDelay(300);
  });
  afterAll(() => harness.close());

  it('completes by reconciling with Stripe when the wait for the webhook times out', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
    const { handle } = await harness.start(order);
    const result = await handle.result();

    expect(result.status).toBe('completed');
    const history = await historyOf(handle);
    expect(history.signals).toEqual([]);
    expect(history.timers).toBeGreaterThanOrEqual(1);
    expect(history.activities.filter((id) => id.startsWith('settle-authorization')).length).toBeGreaterThanOrEqual(1);
    expect(await ledgerOf(harness, order.orderId)).toEqual([{ kind: 'charge', amount_minor: order.amount, stripe_object_id: result.paymentIntentId }]);
    await harness.expectInvariants([order.orderId]);
  });

  it('keeps waiting while Stripe still says processing, and settles on a later check', async () => {
    harness.emulator.setAsyncSettleDelay(2_500);
    try {
      const order = await harness.newOrder({ paymentMethod: 'pm_card_async_success' });
      const { handle } = await harness.start(order);
      const result = await handle.result();

      expect(result.status).toBe('completed');
      const settles = (await historyOf(handle)).activities.filter((id) => id.startsWith('settle-authorization'));
      expect(settles.length).toBeGreaterThanOrEqual(2);
      expect(await ledgerOf(harness, order.orderId)).toHaveLength(1);
      await harness.expectInvariants([order.orderId]);
    } finally {
      harness.emulator.setAsyncSettleDelay(300);
    }
  });

  it('cancels a payment still waiting for authentication past its deadline and ends the order declined', async () => {
    const order = await harness.newOrder({ paymentMethod: 'pm_card_authenticationRequired' });
    const result = await (await harness.start(order)).handle.result();

    expect(result).toMatchObject({ status: 'declined', reason: 'payment_intent_authentication_failure', refundId: null });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => intent.status)).toEqual(['canceled']);
    expect(await ledgerOf(harness, order.orderId)).toEqual([]);
    expect(await orderRow(harness, order.orderId)).toMatchObject({ status: 'declined' });
    expect(await stockOf(harness, order.orderId)).toEqual(['released']);
    await harness.expectInvariants([order.orderId]);
  });
});
