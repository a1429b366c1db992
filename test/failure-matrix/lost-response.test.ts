import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

describe('failure matrix row 1: Stripe commits the charge but the response is lost', () => {
  it('row 1 / I1: the activity retry is answered by Stripe idempotent replay, so there is exactly one charge', async () => {
    const order = await harness.newOrder();
    // Two drops: the first answer and the SDK's own single retry of it are both lost, so the
    // activity attempt fails and Temporal retries the activity under the same key.
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 2 });
    const before = harness.emulator.counters();

    const started = await harness.start(order);
    const result = await started.handle.result();

    expect(result).toMatchObject({ status: 'completed', orderId: order.orderId, refundId: null });
    const after = harness.emulator.counters();
    // Stripe executed once and answered three times: dropped, dropped (SDK retry), then served
    // to the activity's second attempt, both later answers from its saved response.
    expect(after.faults.drop_response - before.faults.drop_response).toBe(2);
    expect(after.replays - before.replays).toBe(2);

    const stripe = await stripeObjectsFor(harness.stripe, order.orderId);
    expect(stripe.intents).toHaveLength(1);
    expect(stripe.succeeded.map((intent) => intent.id)).toEqual([result.paymentIntentId]);
    expect(stripe.refunds).toEqual([]);

    // Both activity attempts presented the one key derived from the original run ID.
    const chargeKey = `${started.runId}/charge-payment`;
    expect(stripe.succeeded[0]?.metadata).toMatchObject({ run_id: started.runId, activity_id: 'charge-payment' });
    const { rows: keys } = await harness.db.pool.query<{ idempotency_key: string; state: string; attempts: number }>(
      `select idempotency_key, state, attempts from activity_idempotency where scope = 'stripe.charge' and idempotency_key like $1`,
      [`${started.runId}/%`],
    );
    expect(keys).toEqual([{ idempotency_key: chargeKey, state: 'completed', attempts: 2 }]);

    const { rows: ledger } = await harness.db.pool.query<{ kind: string; stripe_object_id: string; amount_minor: number }>(
      'select kind, stripe_object_id, amount_minor from ledger_transactions where order_id = $1',
      [order.orderId],
    );
    expect(ledger).toEqual([{ kind: 'charge', stripe_object_id: result.paymentIntentId, amount_minor: order.amount }]);
    await harness.expectInvariants([order.orderId]);
  });
});
