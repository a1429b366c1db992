// Proves the merchant refund's protocol (issue 17): it goes through the activity idempotency
// store, its ledger refund and its order.merchant_refunded event commit together, once per refund
// request, and a retry after the commit, a reset or a second run for the same refund request
// makes no second Stripe refund, ledger row or event. Also the window between migrations 014 and
// 015, when the outbox still has its one-event-per-kind index.
import { randomBytes, randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { toActivityFailure } from '../../src/activities/failures.js';
import type { MerchantRefundInput, MerchantRefundResult } from '../../src/activities/merchant-refund.js';
import type { IdempotencyScope } from '../../src/money/idempotency/activity-idempotency-store.js';
import { merchantRefundWorkflowId } from '../../src/workflows/merchant-refund.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { FailureType } from '../../src/domain/failures.js';
import { announceMerchantRefund, announceOrderPaid, OutboxContractPendingError } from '../../src/messaging/outbox/order-events.js';
import { migrate, MIGRATIONS_DIR } from '../../src/platform/db/migrate.js';
import { withTransaction } from '../../src/platform/db/transaction.js';
import type { merchantRefund } from '../../src/workflows/merchant-refund.js';
import { createTestDatabase } from '../support/database.js';
import { keyRecord as keyRecordOf, ledgerTransactions, outboxEvents } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { resetWorkflow } from '../support/temporal-cli.js';

let harness: SagaHarness;
let activities: ReturnType<typeof createActivities>;

beforeAll(async () => {
  harness = await startSagaHarness();
  activities = createActivities({ db: harness.db.pool, stripe: harness.stripe });
});
afterAll(() => harness.close());

/** A completed order of 2500 usd, made by the saga. */
async function completedOrder(): Promise<{ orderId: string; paymentIntentId: string }> {
  const order = await harness.newOrder();
  const result = await (await harness.start(order)).handle.result();
  expect(result.status).toBe('completed');
  if (!result.paymentIntentId) throw new Error('a completed order has its PaymentIntent');
  return { orderId: order.orderId, paymentIntentId: result.paymentIntentId };
}

const newRefundRequestId = () => `rfd_${randomBytes(18).toString('base64url')}`;

/** The activity's input for one refund request, run by one workflow run (its original run ID). */
function refundInput(orderId: string, amount: number, refundRequestId = newRefundRequestId(), originalRunId: string = randomUUID()): MerchantRefundInput {
  return { orderId, refundRequestId, amount, workflowId: merchantRefundWorkflowId(orderId, refundRequestId), originalRunId };
}

/** One attempt of the merchant-refund activity, as the refund workflow's run `originalRunId` would make it. */
function runRefund(input: MerchantRefundInput): Promise<MerchantRefundResult> {
  return new MockActivityEnvironment(
    { activityId: ActivityId.merchantRefund, workflowExecution: { workflowId: input.workflowId, runId: input.originalRunId } },
    { logger: new DefaultLogger('ERROR') },
  ).run(activities.merchantRefund, input);
}

/** The order's ledger refunds, oldest first. */
async function ledgerRefunds(orderId: string) {
  const transactions = await ledgerTransactions(harness.db.pool, orderId);
  return transactions.filter((row) => row.kind === 'refund').map((row) => ({ refundId: row.stripe_object_id, amount: row.amount_minor }));
}

async function merchantRefundEvents(orderId: string) {
  return (await outboxEvents(harness.db.pool, orderId)).filter((row) => row.event_type === 'order.merchant_refunded');
}

const keyRecord = (scope: IdempotencyScope, key: string) => keyRecordOf(harness.db.pool, scope, key);

const stripeRequests = () => harness.emulator.counters().requests;

describe('a merchant refund goes through the activity idempotency store and writes its event, once per refund', () => {
  it('a retry after the commit is answered from the store: no Stripe call, one Stripe refund, one ledger row, one outbox event keyed by the refund request', async () => {
    const { orderId, paymentIntentId } = await completedOrder();
    const input = refundInput(orderId, 1000);

    const first = await runRefund(input);
    expect(first).toMatchObject({ paymentIntentId, amount: 1000, currency: 'usd', resolvedBy: 'stripe' });
    const before = stripeRequests();
    const retry = await runRefund(input);
    expect(retry).toEqual({ ...first, resolvedBy: 'ledger' });
    expect(stripeRequests()).toBe(before);

    const key = `${input.originalRunId}/${ActivityId.merchantRefund}`;
    expect(await keyRecord('stripe.merchant_refund', key)).toEqual({ state: 'completed', attempts: 2 });
    expect(await keyRecord('merchant_refund.request', `${orderId}/${input.refundRequestId}`)).toMatchObject({ state: 'completed' });
    expect((await stripeObjectsFor(harness.stripe, orderId)).refunds.map((refund) => refund.id)).toEqual([first.refundId]);
    expect(await ledgerRefunds(orderId)).toEqual([{ refundId: first.refundId, amount: 1000 }]);
    const events = await outboxEvents(harness.db.pool, orderId);
    expect(events.map((event) => [event.event_type, event.event_key])).toEqual([
      ['order.paid', ''],
      ['order.merchant_refunded', input.refundRequestId],
    ]);
    expect(events[1]?.payload).toMatchObject({
      event_type: 'order.merchant_refunded',
      order_id: orderId,
      status: 'completed',
      amount_minor: 1000,
      currency: 'usd',
      payment_intent_id: paymentIntentId,
      refund_id: first.refundId,
    });
    await harness.expectInvariants([orderId]);
  });

  it('a reset of a finished refund workflow re-runs the activity under the same key: answered from the store, nothing written twice', async () => {
    const { orderId } = await completedOrder();
    const refundRequestId = newRefundRequestId();
    const workflowId = merchantRefundWorkflowId(orderId, refundRequestId);
    const handle = await harness.client.workflow.start<typeof merchantRefund>('merchantRefund', {
      workflowId,
      taskQueue: harness.taskQueue,
      args: [{ orderId, refundRequestId, amount: 600 }],
    });
    const first = await handle.result();
    expect(first.resolvedBy).toBe('stripe');

    const before = stripeRequests();
    const newRunId = await resetWorkflow({ workflowId, runId: handle.firstExecutionRunId, target: { type: 'FirstWorkflowTask' }, reason: 'test: retry after the commit' });
    const replayed = await harness.client.workflow.getHandle<typeof merchantRefund>(workflowId, newRunId).result();
    expect(replayed).toEqual({ ...first, resolvedBy: 'ledger' });
    expect(stripeRequests()).toBe(before);

    expect(await keyRecord('stripe.merchant_refund', `${handle.firstExecutionRunId}/${ActivityId.merchantRefund}`)).toEqual({ state: 'completed', attempts: 2 });
    expect((await stripeObjectsFor(harness.stripe, orderId)).refunds).toHaveLength(1);
    expect(await ledgerRefunds(orderId)).toEqual([{ refundId: first.refundId, amount: 600 }]);
    expect((await merchantRefundEvents(orderId)).map((event) => event.event_key)).toEqual([refundRequestId]);
    await harness.expectInvariants([orderId]);
  });

  it('a second run for the same refund request makes no second refund: refused while the first has no outcome, then answered with its refund', async () => {
    const { orderId } = await completedOrder();
    const first = refundInput(orderId, 800);
    const second = refundInput(orderId, 800, first.refundRequestId);

    // The first run's refund is made at Stripe, but its answer never comes back: its key and its
    // claim on the refund request stay open.
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/refunds', orderId, count: 2 });
    await expect(runRefund(first)).rejects.toThrow();
    harness.emulator.clearFaults();

    let before = stripeRequests();
    const refused = await runRefund(second).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: FailureType.NeedsReview, nonRetryable: true });
    expect((refused as ApplicationFailure).message).toContain(`${orderId}/${first.refundRequestId}`);
    expect(stripeRequests()).toBe(before);

    // The first run's retry finds its refund at Stripe and records it.
    const recorded = await runRefund(first);
    expect(recorded.resolvedBy).toBe('stripe-search');

    before = stripeRequests();
    expect(await runRefund(second)).toEqual({ ...recorded, resolvedBy: 'ledger' });
    expect(stripeRequests()).toBe(before);
    // The second run never registered a key of its own.
    expect(await keyRecord('stripe.merchant_refund', `${second.originalRunId}/${ActivityId.merchantRefund}`)).toBeUndefined();

    expect((await stripeObjectsFor(harness.stripe, orderId)).refunds).toHaveLength(1);
    expect(await ledgerRefunds(orderId)).toEqual([{ refundId: recorded.refundId, amount: 800 }]);
    expect((await merchantRefundEvents(orderId)).map((event) => event.event_key)).toEqual([first.refundRequestId]);
    await harness.expectInvariants([orderId]);
  });

  it('two different partial refunds of one order are two Stripe refunds, two ledger rows and two outbox events; the saga keeps its one order.paid', async () => {
    const { orderId } = await completedOrder();
    const a = refundInput(orderId, 1000);
    const b = refundInput(orderId, 700);

    const [refundA, refundB] = [await runRefund(a), await runRefund(b)];
    expect(refundA.refundId).not.toBe(refundB.refundId);

    expect((await stripeObjectsFor(harness.stripe, orderId)).refunds).toHaveLength(2);
    expect(await ledgerRefunds(orderId)).toEqual([
      { refundId: refundA.refundId, amount: 1000 },
      { refundId: refundB.refundId, amount: 700 },
    ]);
    const events = await outboxEvents(harness.db.pool, orderId);
    expect(events.map((event) => [event.event_type, event.event_key, event.payload.refund_id, event.payload.amount_minor])).toEqual([
      ['order.paid', '', null, 2500],
      ['order.merchant_refunded', a.refundRequestId, refundA.refundId, 1000],
      ['order.merchant_refunded', b.refundRequestId, refundB.refundId, 700],
    ]);
    await harness.expectInvariants([orderId]);
  });

  it('a refund Stripe refuses is recorded as refused: a retry answers the same refusal without calling Stripe, and nothing is booked', async () => {
    const { orderId } = await completedOrder();
    const input = refundInput(orderId, 2501);

    const refused = await runRefund(input).catch((error: unknown) => error);
    expect(refused).toMatchObject({ type: FailureType.NeedsReview, nonRetryable: true });
    const before = stripeRequests();
    const again = await runRefund(input).catch((error: unknown) => error);
    expect(again).toMatchObject({ type: FailureType.NeedsReview, nonRetryable: true, message: (refused as Error).message });
    expect(stripeRequests()).toBe(before);

    expect(await keyRecord('stripe.merchant_refund', `${input.originalRunId}/${ActivityId.merchantRefund}`)).toEqual({ state: 'failed', attempts: 2 });
    expect(await ledgerRefunds(orderId)).toEqual([]);
    expect(await merchantRefundEvents(orderId)).toEqual([]);
  });
});

describe('between migrations 014 and 015: the outbox still has outbox_one_event_per_kind', () => {
  it("an old worker's statement still plans; an order's second merchant refund event waits with a retryable error, and is written once 015 is in", async () => {
    const db = await createTestDatabase({ migrated: false });
    try {
      await migrate(db.pool, MIGRATIONS_DIR, { through: '014_outbox_event_key.sql' });
      const orderId = `M-${randomUUID().slice(0, 13)}`;
      // The order as a worker of that time recorded it (no tenant yet: that is migration 016).
      await db.pool.query(
        `insert into orders (order_id, customer_id, amount_minor, currency, sku, quantity, request_hash, workflow_id)
         values ($1, 'cust-1', 2500, 'usd', 'sku-1', 1, 'h', $2)`,
        [orderId, `order-payment-${orderId}`],
      );
      // What a worker from before this change writes: its conflict target needs the old index.
      const oldWorkerInsert = `insert into outbox (event_type, order_id, payload) values ('order.failed', $1, '{}'::jsonb) on conflict (order_id, event_type) do nothing`;
      expect((await db.pool.query(oldWorkerInsert, [orderId])).rowCount).toBe(1);
      expect((await db.pool.query(oldWorkerInsert, [orderId])).rowCount).toBe(0);
      // The new worker's saga events dedupe as before, beside the old index.
      const paid = { amountMinor: 2500, currency: 'usd', paymentIntentId: 'pi_1' };
      expect(await withTransaction(db.pool, (client) => announceOrderPaid(client, orderId, paid))).toBe(true);
      expect(await withTransaction(db.pool, (client) => announceOrderPaid(client, orderId, paid))).toBe(false);

      const refund = (refundId: string) => ({ amountMinor: 500, currency: 'usd', refundId, paymentIntentId: 'pi_1' });
      expect(await withTransaction(db.pool, (client) => announceMerchantRefund(client, orderId, 'rfd_a', refund('re_a')))).toBe(true);
      expect(await withTransaction(db.pool, (client) => announceMerchantRefund(client, orderId, 'rfd_a', refund('re_a')))).toBe(false);
      const waiting = await withTransaction(db.pool, (client) => announceMerchantRefund(client, orderId, 'rfd_b', refund('re_b'))).catch((error: unknown) => error);
      expect(waiting).toBeInstanceOf(OutboxContractPendingError);
      // Retryable: the activity maps it to nothing final, so Temporal tries again.
      expect(toActivityFailure(waiting)).toBe(waiting);

      await migrate(db.pool);
      expect(await withTransaction(db.pool, (client) => announceMerchantRefund(client, orderId, 'rfd_b', refund('re_b')))).toBe(true);
      const { rows } = await db.pool.query<{ event_type: string; event_key: string }>('select event_type, event_key from outbox where order_id = $1 order by id', [orderId]);
      expect(rows).toEqual([
        { event_type: 'order.failed', event_key: '' },
        { event_type: 'order.paid', event_key: '' },
        { event_type: 'order.merchant_refunded', event_key: 'rfd_a' },
        { event_type: 'order.merchant_refunded', event_key: 'rfd_b' },
      ]);
    } finally {
      await db.drop();
    }
  });
});
