import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import type { ChargeOutcome, ChargePaymentInput } from '../../src/activities/types.js';
import { withTransaction } from '../../src/db/transaction.js';
import { fenceKey, readKey } from '../../src/idempotency/activity-idempotency-store.js';
import { deriveIdempotencyKey } from '../../src/idempotency/idempotency-key.js';
import { recordOrder } from '../../src/orders/orders.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

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

describe('a charge that completes after a compensation fenced its key', () => {
  it('is recorded truthfully (ledger charge, key completed) and the order goes to needs_review', async () => {
    const order = await harness.newOrder();
    const workflowId = `order-payment-${order.orderId}`;
    await recordOrder(harness.db.pool, order, workflowId);
    const runId = randomUUID();
    const key = deriveIdempotencyKey({ runId, activityId: 'charge-payment' });
    const activities = createActivities({ db: harness.db.pool, stripe: harness.stripe });
    harness.emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, latencyMs: 1_500 });

    const env = new MockActivityEnvironment({ activityId: 'charge-payment', workflowExecution: { workflowId, runId } });
    const charging = env.run<[ChargePaymentInput], ChargeOutcome, typeof activities.chargePayment>(activities.chargePayment, {
      order,
      workflowId,
      originalRunId: runId,
    });
    // The attempt has registered its key and is waiting on Stripe: a compensation fences it now.
    await until(async () => (await readKey(harness.db.pool, 'stripe.charge', key))?.state === 'pending');
    await withTransaction(harness.db.pool, (client) =>
      fenceKey(client, { scope: 'stripe.charge', key, retentionMs: 60_000, result: { failure: 'ChargeAttemptExpired', fenced: true, reason: 'test' } }),
    );
    const result = await charging;

    const charged = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(charged.succeeded.map((intent) => intent.id)).toEqual([result.paymentIntentId]);
    expect((await readKey(harness.db.pool, 'stripe.charge', key))?.state).toBe('completed');
    const { rows } = await harness.db.pool.query<{ status: string; status_reason: string; charges: number }>(
      `select status, status_reason, (select count(*)::int from ledger_transactions where order_id = $1 and kind = 'charge') as charges
         from orders where order_id = $1`,
      [order.orderId],
    );
    expect(rows[0]).toMatchObject({ status: 'needs_review', charges: 1 });
    expect(rows[0]?.status_reason).toContain('refund it by hand');
  });
});
