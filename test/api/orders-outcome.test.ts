// POST /v1/orders answers with the payment's outcome (authorized, declined, out of stock, 3-D
// Secure), or 202 pending past its wait budget.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { setStock } from '../../src/orders/stock.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

/**
 * POST /v1/orders answers with the payment's outcome in one call (Update-with-Start), and
 * 202 pending when it is not known within the budget; a retry of the same request then attaches
 * to the same update.
 */
let h: SagaHarness;
let api: OrdersApi;
let impatient: OrdersApi;
let apiKey: string;

beforeAll(async () => {
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  // The same service with a budget short enough to run out while no worker runs.
  impatient = await startOrdersApi(h, undefined, { outcomeWaitMs: 300 });
  apiKey = await api.keyFor('tenant-outcome');
});
afterAll(async () => {
  await Promise.all([api.app.close(), impatient.app.close()]);
  await h.close();
});

const newKey = () => `idem-${randomUUID()}`;

async function acceptedUpdates(orderId: string) {
  const history = await h.client.workflow.getHandle(workflowIdForOrder(orderId)).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    return accepted ? [accepted.acceptedRequest?.meta?.updateId ?? null] : [];
  });
}

describe('POST /v1/orders: the payment outcome in one call', () => {
  it('pm_card_visa: 201 authorized with the hold, before the capture; the saga then captures and completes', async () => {
    const body = await api.orderBody();
    const key = newKey();
    const created = await api.post({ apiKey, idempotencyKey: key, body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'order', status: 'authorized', amount: body.amount });
    const orderId = created.body.id as string;
    expect(created.headers.location).toBe(`/v1/orders/${orderId}`);
    const paymentIntentId = created.body.paymentIntentId as string;
    expect(paymentIntentId).toMatch(/^pi_/);

    const result: unknown = await h.client.workflow.getHandle(workflowIdForOrder(orderId)).result();
    expect(result).toMatchObject({ status: 'completed', paymentIntentId });
    expect((await stripeObjectsFor(h.stripe, orderId)).succeeded.map((intent) => intent.id)).toEqual([paymentIntentId]);
    // One update, named by the tenant, the operation and the key.
    expect(await acceptedUpdates(orderId)).toEqual([`tenant-outcome/order.create/${key}`]);
    await h.expectInvariants([orderId]);
  });

  it('a declined card: 201 declined with the decline code in one call; nothing charged, nothing held', async () => {
    const created = await api.post({ apiKey, idempotencyKey: newKey(), body: await api.orderBody({ paymentMethod: 'pm_card_chargeDeclinedInsufficientFunds' }) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'declined', declineCode: 'insufficient_funds' });
    const orderId = created.body.id as string;
    expect(await h.client.workflow.getHandle(workflowIdForOrder(orderId)).result()).toMatchObject({ status: 'declined' });
    const stripe = await stripeObjectsFor(h.stripe, orderId);
    expect(stripe.succeeded).toHaveLength(0);
    expect(stripe.intents.filter((intent) => intent.status === 'requires_capture')).toHaveLength(0);
    await h.expectInvariants([orderId]);
  });

  it('the last unit gone: 201 out_of_stock, and no card was ever touched', async () => {
    const body = await api.orderBody();
    await setStock(h.db.pool, body.sku as string, 0, 'tenant-outcome');
    const created = await api.post({ apiKey, idempotencyKey: newKey(), body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'out_of_stock' });
    const orderId = created.body.id as string;
    // The answer came before the saga finished undoing the order record.
    expect(await h.client.workflow.getHandle(workflowIdForOrder(orderId)).result()).toMatchObject({ status: 'compensated' });
    expect((await stripeObjectsFor(h.stripe, orderId)).intents).toHaveLength(0);
    await h.expectInvariants([orderId]);
  });

  it('3-D Secure: 201 requires_action with Stripe’s next_action, nothing captured yet', async () => {
    const created = await api.post({ apiKey, idempotencyKey: newKey(), body: await api.orderBody({ paymentMethod: 'pm_card_threeDSecure2Required' }) });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('requires_action');
    expect((created.body.nextAction as { type?: unknown } | null)?.type).toBe('use_stripe_sdk');
    const orderId = created.body.id as string;
    const stripe = await stripeObjectsFor(h.stripe, orderId);
    expect(stripe.succeeded).toHaveLength(0);
    expect(stripe.intents.map((intent) => intent.status)).toEqual(['requires_action']);
    await h.client.workflow.getHandle(workflowIdForOrder(orderId)).cancel();
  });

  it('past the budget: 202 pending with the order’s URL, not stored; the same request again attaches to the same update and answers 201, then replays it', async () => {
    const body = await api.orderBody();
    const key = newKey();
    await h.stopWorker();
    let orderId: string;
    try {
      const pending = await impatient.post({ apiKey, idempotencyKey: key, body });
      expect(pending.status).toBe(202);
      expect(pending.body).toMatchObject({ object: 'order', status: 'pending' });
      orderId = pending.body.id as string;
      expect(pending.headers.location).toBe(`/v1/orders/${orderId}`);
      expect(Number(pending.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // The order is certainly started, and its key is left pending, free for the retry.
      expect((await h.client.workflow.getHandle(workflowIdForOrder(orderId)).describe()).status.name).toBe('RUNNING');
      const { rows } = await h.db.pool.query<{ state: string; resource_id: string; locked: boolean }>(
        `select state, resource_id, coalesce(locked_until > now(), false) as locked from api_idempotency where idempotency_key = $1`,
        [key],
      );
      expect(rows).toEqual([{ state: 'pending', resource_id: orderId, locked: false }]);

      // Still no worker: a second retry is 202 again, for the same order.
      const stillPending = await impatient.post({ apiKey, idempotencyKey: key, body });
      expect(stillPending).toMatchObject({ status: 202, body: { id: orderId } });
    } finally {
      await h.startWorker();
    }
    const answered = await api.post({ apiKey, idempotencyKey: key, body });
    expect(answered.status).toBe(201);
    expect(answered.body).toMatchObject({ id: orderId, status: 'authorized' });
    expect(answered.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await api.post({ apiKey, idempotencyKey: key, body });
    expect(replayed.status).toBe(201);
    expect(replayed.body).toEqual(answered.body);
    expect(replayed.headers['idempotent-replayed']).toBe('true');

    expect(await h.client.workflow.getHandle(workflowIdForOrder(orderId)).result()).toMatchObject({ status: 'completed' });
    // Three requests that reached Temporal, one update in the history, one charge.
    expect(await acceptedUpdates(orderId)).toEqual([`tenant-outcome/order.create/${key}`]);
    expect((await stripeObjectsFor(h.stripe, orderId)).succeeded).toHaveLength(1);
    await h.expectInvariants([orderId]);
  });
});
