// Failure-matrix row 3 / I7: one key with a different payload is refused at Stripe, in the
// authorization activity, in the saga and at the order ID, and applies nothing.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { FailureType } from '../../src/domain/failures.js';
import { workflowIdForOrder, type OrderInput } from '../../src/domain/order-input.js';
import { recordOrder } from '../../src/orders/orders.js';
import { OrderIdConflictError, startOrder } from '../../src/saga-client/start-order.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;

beforeAll(async () => {
  // Workers are started by the tests that need one, after they have set the stage.
  harness = await startSagaHarness({ worker: false });
});
afterAll(() => harness.close());

/** Pre-uses the saga's authorization key with another payload: what a key collision looks like to Stripe. */
function preUseAuthorizationKey(key: string, order: OrderInput) {
  return harness.stripe.paymentIntents.create(
    {
      amount: order.amount + 100,
      currency: order.currency,
      payment_method: 'pm_card_visa',
      confirm: true,
      capture_method: 'manual',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      description: 'another intent that happened to get the same key',
    },
    { idempotencyKey: key },
  );
}

async function orderState(orderId: string) {
  const { rows } = await harness.db.pool.query<{ status: string; status_reason: string | null; payment_intent_id: string | null }>(
    'select status, status_reason, payment_intent_id from orders where order_id = $1',
    [orderId],
  );
  return rows[0];
}

async function ledgerRows(orderId: string) {
  const { rows } = await harness.db.pool.query<{ id: number }>('select id from ledger_transactions where order_id = $1', [orderId]);
  return rows;
}

describe('failure matrix row 3: one key, different payload', () => {
  it('row 3 (Stripe) / I7: the same Idempotency-Key with other parameters is refused with StripeIdempotencyError, the second payload not applied', async () => {
    const key = `${randomUUID()}/authorize-payment`;
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 1200,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { purpose: 'row-3' },
    };
    const first = await harness.stripe.paymentIntents.create(params, { idempotencyKey: key });
    const before = harness.emulator.counters();

    const reused = harness.stripe.paymentIntents.create({ ...params, amount: 1300 }, { idempotencyKey: key });

    await expect(reused).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(harness.emulator.counters().idempotencyErrors - before.idempotencyErrors).toBe(1);
    const underKey = (await harness.stripe.paymentIntents.list({ limit: 100 })).data.filter(
      (intent) => intent.metadata.purpose === 'row-3',
    );
    expect(underKey.map((intent) => [intent.id, intent.amount])).toEqual([[first.id, 1200]]);
  });

  it('row 3 (authorization activity) / I7: an authorization key Stripe already holds for another payload fails non-retryably as IdempotencyConflict, and nothing is held or booked', async () => {
    const order = await harness.newOrder();
    const runId = randomUUID();
    const workflowId = workflowIdForOrder(order.orderId);
    await recordOrder(harness.db.pool, order, workflowId);
    const key = `${runId}/${ActivityId.authorizePayment}`;
    const other = await preUseAuthorizationKey(key, order);
    const { authorizePayment } = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    const env = new MockActivityEnvironment({ activityId: ActivityId.authorizePayment }, { logger: new DefaultLogger('WARN') });

    const failure = await env.run(authorizePayment, { order, workflowId, originalRunId: runId }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.IdempotencyConflict, nonRetryable: true });
    const { rows: keys } = await harness.db.pool.query<{ state: string; result: { failure: string } }>(
      `select state, result from activity_idempotency where scope = 'stripe.authorize' and idempotency_key = $1`,
      [key],
    );
    expect(keys).toEqual([{ state: 'failed', result: expect.objectContaining({ failure: FailureType.IdempotencyConflict }) as unknown }]);

    // A retry of the activity answers the same failure from Postgres, without asking Stripe.
    const requestsBefore = harness.emulator.counters().requests;
    const again = await env.run(authorizePayment, { order, workflowId, originalRunId: runId }).catch((error: unknown) => error);
    expect(again).toMatchObject({ type: FailureType.IdempotencyConflict, nonRetryable: true });
    expect(harness.emulator.counters().requests).toBe(requestsBefore);

    // Neither payload was applied for the order: the only object under the key is the other one.
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).intents).toEqual([]);
    expect((await harness.stripe.paymentIntents.retrieve(other.id)).amount).toBe(order.amount + 100);
    expect(await ledgerRows(order.orderId)).toEqual([]);
    expect(await orderState(order.orderId)).toMatchObject({ status: 'pending', payment_intent_id: null });
  });

  it('row 3 (saga) / I7 + I6: a workflow whose authorization key is taken by another payload ends compensated with reason IdempotencyConflict; no hold, no refund, no ledger entry', async () => {
    const order = await harness.newOrder();
    // The worker is not running yet: the run exists, so its key can be taken before it authorizes.
    const started = await harness.start(order);
    await preUseAuthorizationKey(`${started.runId}/${ActivityId.authorizePayment}`, order);
    await harness.startWorker();

    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'compensated', paymentIntentId: null, refundId: null });
    expect(result.reason).toContain(FailureType.IdempotencyConflict);
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toEqual([]);
    expect(stripe.refunds).toEqual([]);
    expect(await ledgerRows(order.orderId)).toEqual([]);
    expect(await orderState(order.orderId)).toMatchObject({ status: 'compensated', payment_intent_id: null });
    // The authorization was never retried: one activity attempt, failed for good.
    const history = await started.handle.fetchHistory();
    const chargeFailures = (history.events ?? []).filter(
      (event) => event.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === FailureType.IdempotencyConflict,
    );
    expect(chargeFailures).toHaveLength(1);
    expect(chargeFailures[0]?.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.nonRetryable).toBe(true);
    await harness.expectInvariants([order.orderId]);
  });

  it('row 3 (order) / I7: the same order ID with a different payload is refused (OrderIdConflictError, starter exit 3) and starts nothing', async () => {
    await harness.stopWorker();
    const order = await harness.newOrder();
    const first = await harness.start(order);
    const different = { ...order, quantity: order.quantity + 1 };

    await expect(startOrder(harness.client, harness.taskQueue, different)).rejects.toBeInstanceOf(OrderIdConflictError);
    const cli = await runCli(
      'src/starter.ts',
      [
        '--order-id', different.orderId,
        '--customer-id', different.customerId,
        '--amount', String(different.amount),
        '--currency', different.currency,
        '--payment-method', different.paymentMethod,
        '--sku', different.sku,
        '--quantity', String(different.quantity),
      ],
      { TEMPORAL_ADDRESS: harness.temporalAddress, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: harness.taskQueue },
    );
    expect(cli.code).toBe(3);
    expect(cli.stderr).toContain(`order ID '${order.orderId}' is already used by a different order`);

    // Still the first run, with the first order's input; no second run was started.
    const description = await harness.handle(order).describe();
    expect(description.runId).toBe(first.runId);
    const runs = [];
    for await (const run of harness.client.workflow.list({ query: `WorkflowId = '${workflowIdForOrder(order.orderId)}'` })) runs.push(run.runId);
    expect(runs.filter((runId) => runId !== first.runId)).toEqual([]);

    // The first order is unaffected and completes as itself.
    await harness.startWorker();
    const result = await first.handle.result();
    expect(result.status).toBe('completed');
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded.map((intent) => intent.amount_received)).toEqual([order.amount]);
    await harness.expectInvariants([order.orderId]);
  });
});
