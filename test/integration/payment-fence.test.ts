// Proves what happens when a Stripe attempt lands after a compensation fenced its key: a late hold
// is voided at once, a late capture is recorded truthfully and sent to needs_review.
import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { ActivityId } from '../../src/domain/activity-ids.js';
import { FailureType } from '../../src/domain/failures.js';
import { readKey } from '../../src/money/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../../src/money/idempotency/idempotency-key.js';
import { recordOrder } from '../../src/orders/orders.js';
import { fenceAuthorization, fenceCapture } from '../../src/money/payments/payment-protocol.js';
import { ledgerTransactions, orderRow } from '../support/order-state.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

/**
 * A compensation fences a key it found with no answer, so that nothing can happen under it after
 * the saga decided it had not. An attempt already talking to Stripe when the fence went up can
 * still land; these are the two ways it can, and what the protocol does with each.
 */
let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
});
afterAll(() => harness.close());

async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out');
}

async function recordedOrder() {
  const order = await harness.newOrder();
  const workflowId = `order-payment-${order.orderId}`;
  await recordOrder(harness.db.pool, order, workflowId);
  return { order, workflowId, runId: randomUUID() };
}

/** Runs one activity as a worker would, in an activity context carrying its explicit ID. */
function runActivity<A extends unknown[], R>(ids: { activityId: string; workflowId: string; runId: string }, activity: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment({ activityId: ids.activityId, workflowExecution: { workflowId: ids.workflowId, runId: ids.runId } }).run<A, R, typeof activity>(activity, ...args);
}

describe('an attempt that lands after a compensation fenced its key', () => {
  it('a hold placed after the void fenced the authorization key is voided at once: nothing held, nothing to review, the fence stands', async () => {
    const { order, workflowId, runId } = await recordedOrder();
    const key = deriveIdempotencyKey({ runId, activityId: ActivityId.authorizePayment });
    const activities = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    harness.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, latencyMs: 1_500 });

    const authorizing = runActivity({ activityId: ActivityId.authorizePayment, workflowId, runId }, activities.authorizePayment, { order, workflowId, originalRunId: runId });
    // The attempt has registered its key and is waiting on Stripe: the void fences it now.
    await until(async () => (await readKey(harness.db.pool, 'stripe.authorize', key))?.state === 'pending');
    await fenceAuthorization(harness.db.pool, key, 'test: compensated before the authorization completed', { retentionMs: 60_000 });
    const outcome = await authorizing.catch((error: unknown) => error);

    expect(outcome).toMatchObject({ type: FailureType.PaymentAttemptExpired, nonRetryable: true });
    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents.map((intent) => [intent.status, intent.amount_received])).toEqual([['canceled', 0]]);
    expect((await readKey(harness.db.pool, 'stripe.authorize', key))?.state).toBe('failed');
    expect(await orderRow(harness.db.pool, order.orderId)).toMatchObject({ status: 'pending', payment_intent_id: null });
  });

  it('a capture that lands after the refund fenced the capture key is recorded truthfully (ledger charge, key completed) and the order goes to needs_review', async () => {
    const { order, workflowId, runId } = await recordedOrder();
    const activities = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    const hold = await runActivity({ activityId: ActivityId.authorizePayment, workflowId, runId }, activities.authorizePayment, { order, workflowId, originalRunId: runId });
    if (hold.status !== 'requires_capture') throw new Error(`expected a hold, got ${hold.status}`);
    const key = deriveIdempotencyKey({ runId, activityId: ActivityId.capturePayment });
    harness.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: order.orderId, latencyMs: 1_500 });

    const capturing = runActivity({ activityId: ActivityId.capturePayment, workflowId, runId }, activities.capturePayment, { orderId: order.orderId, workflowId, originalRunId: runId, hold });
    await until(async () => (await readKey(harness.db.pool, 'stripe.capture', key))?.state === 'pending');
    await fenceCapture(harness.db.pool, key, 'test: compensated before the capture completed', { retentionMs: 60_000 });
    const captured = await capturing;

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.succeeded.map((intent) => intent.id)).toEqual([captured.paymentIntentId]);
    expect((await readKey(harness.db.pool, 'stripe.capture', key))?.state).toBe('completed');
    expect(await ledgerTransactions(harness.db.pool, order.orderId)).toEqual([{ kind: 'charge', amount_minor: order.amount, stripe_object_id: captured.paymentIntentId }]);
    const row = await orderRow(harness.db.pool, order.orderId);
    expect(row).toMatchObject({ status: 'needs_review' });
    expect(row?.status_reason).toContain('refund it by hand');
  });
});
