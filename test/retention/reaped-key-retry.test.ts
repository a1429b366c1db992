// Proves a late retry or a reset after the reaper deleted an order's keys creates no second effect:
// captures and charges are booked once, an existing PaymentIntent is found and adopted.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import type { AuthorizationOutcome, AuthorizePaymentInput } from '../../src/activities/types.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { claimCharge, recordOrder } from '../../src/orders/orders.js';
import { reapExpired } from '../../src/operations/retention/reaper.js';
import { DEFAULT_RETENTION } from '../../src/operations/retention/settings.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { resetWorkflow } from '../support/temporal-cli.js';

/** Thirty days on, on the emulator's clock: Stripe has long forgotten every key of the order. */
const A_MONTH_MS = 30 * 24 * 60 * 60 * 1000;

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

async function keysOf(runId: string) {
  const { rows } = await harness.db.pool.query<{ scope: string; state: string }>(
    `select scope, state from activity_idempotency where idempotency_key like $1 || '/%' order by scope`,
    [runId],
  );
  return rows;
}

async function ledgerRows(orderId: string) {
  const { rows } = await harness.db.pool.query<{ kind: string; stripe_object_id: string; amount_minor: number }>(
    'select kind, stripe_object_id, amount_minor from ledger_transactions where order_id = $1 order by id',
    [orderId],
  );
  return rows;
}

describe('a late retry after the reaper deleted its key', () => {
  it('creates no second effect: the capture is refused by Stripe and booked once by the ledger key; the authorization finds the existing PaymentIntent by a Stripe search; the order keeps its one payment key', async () => {
    const order = await harness.newOrder();
    const started = await harness.start(order);
    const result = await started.handle.result();
    expect(result).toMatchObject({ status: 'completed' });
    const paymentIntentId = result.paymentIntentId ?? 'no PaymentIntent';
    expect(paymentIntentId).toMatch(/^pi_/);
    expect((await keysOf(started.runId)).map((key) => key.scope)).toEqual(['stripe.authorize', 'stripe.capture']);

    // The keys reach their horizon, and the reaper deletes them; Stripe has forgotten them too.
    await harness.db.pool.query(`update activity_idempotency set expires_at = now() - interval '1 second' where idempotency_key like $1 || '/%'`, [
      started.runId,
    ]);
    const reaped = await reapExpired(harness.db.pool, DEFAULT_RETENTION);
    expect(reaped.deleted.activity_idempotency).toBe(2);
    expect(await keysOf(started.runId)).toEqual([]);
    harness.emulator.advanceClock(A_MONTH_MS);

    const { authorizePayment, capturePayment } = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    const env = (activityId: string) => new MockActivityEnvironment({ activityId }, { logger: new DefaultLogger('ERROR') });
    const keyed = { workflowId: workflowIdForOrder(order.orderId), originalRunId: started.runId };

    // The authorization retried late (an operator's reset): no second hold.
    const authorized = await env(ActivityId.authorizePayment).run<[AuthorizePaymentInput], AuthorizationOutcome, typeof authorizePayment>(authorizePayment, { order, ...keyed });
    expect(authorized).toMatchObject({ paymentIntentId, amount: order.amount });

    // The capture retried late: Stripe refuses a second capture, the ledger's key a second booking.
    const captured = await env(ActivityId.capturePayment).run(capturePayment, {
      orderId: order.orderId,
      ...keyed,
      hold: { paymentIntentId, amount: order.amount, currency: order.currency, status: 'requires_capture' as const, captureBefore: 'captureBefore' in authorized ? authorized.captureBefore : 0 },
    });
    expect(captured).toMatchObject({ paymentIntentId, amountCaptured: order.amount });

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => intent.id)).toEqual([paymentIntentId]);
    expect(stripe.succeeded).toHaveLength(1);
    expect(await ledgerRows(order.orderId)).toEqual([{ kind: 'charge', stripe_object_id: paymentIntentId, amount_minor: order.amount }]);
    const { rows } = await harness.db.pool.query('select status, charge_key from orders where order_id = $1', [order.orderId]);
    expect(rows[0]).toEqual({ status: 'completed', charge_key: `${started.runId}/${ActivityId.authorizePayment}` });
    // The keys are back, with the answers they had; the order announced its payment once.
    expect(await keysOf(started.runId)).toEqual([
      { scope: 'stripe.authorize', state: 'completed' },
      { scope: 'stripe.capture', state: 'completed' },
    ]);
    const outbox = await harness.db.pool.query('select event_type from outbox where order_id = $1', [order.orderId]);
    expect(outbox.rows).toEqual([{ event_type: 'order.paid' }]);
    await harness.expectInvariants([order.orderId]);
  });

  it('an operator reset to the first workflow task after the keys were reaped, a month on: the reset run completes with the one PaymentIntent, captured and booked once', async () => {
    const order = await harness.newOrder();
    const started = await harness.start(order);
    const result = await started.handle.result();
    expect(result).toMatchObject({ status: 'completed' });
    await harness.db.pool.query(`update activity_idempotency set expires_at = now() - interval '1 second' where idempotency_key like $1 || '/%'`, [
      started.runId,
    ]);
    expect((await reapExpired(harness.db.pool, DEFAULT_RETENTION)).deleted.activity_idempotency).toBe(2);
    harness.emulator.advanceClock(A_MONTH_MS);

    const workflowId = workflowIdForOrder(order.orderId);
    const newRunId = await resetWorkflow({ workflowId, runId: started.runId, target: { type: 'FirstWorkflowTask' }, reason: 'reaped keys, then a reset' });
    const reset = await harness.client.workflow.getHandle<typeof orderPaymentSaga>(workflowId, newRunId).result();

    expect(reset).toMatchObject({ status: 'completed', paymentIntentId: result.paymentIntentId });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.id, intent.status])).toEqual([[result.paymentIntentId, 'succeeded']]);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerRows(order.orderId)).toEqual([{ kind: 'charge', stripe_object_id: result.paymentIntentId, amount_minor: order.amount }]);
    await harness.expectInvariants([order.orderId]);
  });

  it('still sends when the earlier attempt claimed the payment but never reached Stripe (a crash between claim and key): the search finds nothing, one hold is placed', async () => {
    const order = await harness.newOrder();
    const workflowId = workflowIdForOrder(order.orderId);
    const originalRunId = randomUUID();
    await recordOrder(harness.db.pool, order, workflowId);
    await claimCharge(harness.db.pool, order.orderId, `${originalRunId}/${ActivityId.authorizePayment}`);

    const { authorizePayment } = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    const env = new MockActivityEnvironment({ activityId: ActivityId.authorizePayment }, { logger: new DefaultLogger('ERROR') });
    const authorized = await env.run<[AuthorizePaymentInput], AuthorizationOutcome, typeof authorizePayment>(authorizePayment, { order, workflowId, originalRunId });

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.held.map((intent) => intent.id)).toEqual([authorized.paymentIntentId]);
    expect(stripe.intents).toHaveLength(1);
  });
});
