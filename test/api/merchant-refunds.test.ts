// POST /v1/orders/:id/refunds: a merchant refund happens once per Idempotency-Key, through
// replays, lost Stripe responses and partial refunds, and only for the tenant's completed orders.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { merchantRefund } from '../../src/workflows/merchant-refund.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type ApiResponse, type OrdersApi } from '../support/api.js';
import { outboxEvents } from '../support/order-state.js';

let h: SagaHarness;
let api: OrdersApi;
let tenant: string;
let otherTenant: string;

beforeAll(async () => {
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  tenant = await api.keyFor('refund-tenant');
  otherTenant = await api.keyFor('refund-other');
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

const newKey = () => `idem-${randomUUID()}`;

/** A completed order of 4200 usd, created through the API. */
async function completedOrder(): Promise<{ orderId: string; key: string }> {
  const key = newKey();
  const created = await api.post({ apiKey: tenant, idempotencyKey: key, body: await api.orderBody() });
  const orderId = created.body.id as string;
  await h.client.workflow.getHandle<typeof orderPaymentSaga>(`order-payment-${orderId}`).result();
  return { orderId, key };
}

async function refund(orderId: string, key: string, body: unknown, apiKey = tenant): Promise<ApiResponse> {
  const response = await api.app.inject({
    method: 'POST',
    url: `/v1/orders/${orderId}/refunds`,
    headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: response.statusCode, headers: response.headers, body: JSON.parse(response.body) as Record<string, unknown> };
}

const refundResult = (response: ApiResponse) =>
  h.client.workflow.getHandle<typeof merchantRefund>(response.body.workflowId as string).result();

async function ledgerRefunds(orderId: string): Promise<number> {
  const { rows } = await h.db.pool.query<{ n: number }>("select count(*)::int as n from ledger_transactions where order_id = $1 and kind = 'refund'", [orderId]);
  return rows[0]?.n ?? 0;
}

describe('POST /v1/orders/:id/refunds: a merchant refund happens once per key', () => {
  it('a partial refund retried with the same key replays its answer; Stripe and the ledger hold one refund and the invariants accept it', async () => {
    const { orderId } = await completedOrder();
    const key = newKey();
    const first = await refund(orderId, key, { amount: 1000 });
    const retry = await refund(orderId, key, { amount: 1000 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ object: 'refund', orderId, amount: 1000, currency: 'usd', status: 'pending' });
    expect(first.body.id).toMatch(/^rfd_/);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');

    const result = await refundResult(first);
    expect(result.amount).toBe(1000);
    const stripe = await stripeObjectsFor(h.stripe, orderId);
    expect(stripe.refunds).toHaveLength(1);
    expect(stripe.refunds[0]?.metadata?.merchant_refund).toBe('true');
    expect(await ledgerRefunds(orderId)).toBe(1);
    await h.expectInvariants([orderId]);

    const read = await api.get(tenant, `/v1/orders/${orderId}`);
    expect(read.body).toMatchObject({ status: 'completed', amountRefunded: 1000, refunds: [{ stripeRefundId: result.refundId, amount: 1000, currency: 'usd' }] });
  });

  it('Stripe losing the refund response twice makes Temporal retry the activity under the same keys: still one refund', async () => {
    const { orderId } = await completedOrder();
    h.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/refunds', orderId, count: 2 });
    const response = await refund(orderId, newKey(), {});
    const result = await refundResult(response);
    h.emulator.clearFaults();
    const history = await h.client.workflow.getHandle(response.body.workflowId as string).fetchHistory();
    const attempts = (history.events ?? []).map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 0);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
    expect(result.amount).toBe(4200);
    expect((await stripeObjectsFor(h.stripe, orderId)).refunds).toHaveLength(1);
    expect(await ledgerRefunds(orderId)).toBe(1);
    await h.expectInvariants([orderId]);
  });

  it('partial refunds add up to the charge and no further: the one beyond it is answered 400 naming what is refundable, and starts nothing', async () => {
    const { orderId } = await completedOrder();
    await refundResult(await refund(orderId, newKey(), { amount: 4000 }));
    const key = newKey();
    const beyond = await refund(orderId, key, { amount: 201 });
    expect(beyond.status).toBe(400);
    expect(beyond.body).toMatchObject({ error: 'amount_too_large', refundable: 200, currency: 'usd' });
    expect(beyond.body.message).toContain('200 usd');
    // Not stored under the key: the same key with what is refundable is a new answer, not a replay.
    const within = await refund(orderId, newKey(), { amount: 200 });
    expect(within.status).toBe(201);
    await refundResult(within);
    expect((await refund(orderId, key, { amount: 201 })).body).toMatchObject({ error: 'amount_too_large', refundable: 0 });
    expect(await ledgerRefunds(orderId)).toBe(2);
    const { rows } = await h.db.pool.query<{ n: number }>('select count(*)::int as n from refund_requests where order_id = $1', [orderId]);
    expect(rows[0]?.n).toBe(2);
    await h.expectInvariants([orderId]);
  });

  it('keys are scoped by operation: the key that created the order creates a refund, not a 422', async () => {
    const { orderId, key } = await completedOrder();
    const response = await refund(orderId, key, { amount: 100 });
    expect(response.status).toBe(201);
    expect(response.body.object).toBe('refund');
    await refundResult(response);
  });

  it('the same key with another amount is 422; another tenant’s order is 404; an order not completed is 409; nothing is refunded', async () => {
    const { orderId } = await completedOrder();
    const key = newKey();
    const first = await refund(orderId, key, { amount: 300 });
    await refundResult(first);
    const otherAmount = await refund(orderId, key, { amount: 301 });
    expect(otherAmount.status).toBe(422);
    expect(otherAmount.body.message).toContain(key);
    expect((await refund(orderId, newKey(), { amount: 1 }, otherTenant)).status).toBe(404);
    expect((await refund(orderId, newKey(), { amount: 5000 })).status).toBe(400);
    expect((await refund(orderId, newKey(), { amount: 'all' })).status).toBe(400);

    const declined = await api.post({ apiKey: tenant, idempotencyKey: newKey(), body: await api.orderBody({ paymentMethod: 'pm_card_chargeDeclined' }) });
    const declinedId = declined.body.id as string;
    await h.client.workflow.getHandle(`order-payment-${declinedId}`).result().catch(() => undefined);
    const notCompleted = await refund(declinedId, newKey(), {});
    expect(notCompleted.status).toBe(409);
    expect(notCompleted.body.error).toBe('order_not_refundable');
    expect(await ledgerRefunds(orderId)).toBe(1);
    expect(await ledgerRefunds(declinedId)).toBe(0);
  });
});

describe('refund requests a merchant can follow', () => {
  it('five concurrent refunds of 600 against a capture of 1000: one 201, four 400 naming the 400 left; one refund at Stripe and in the ledger', async () => {
    const key = newKey();
    const created = await api.post({ apiKey: tenant, idempotencyKey: key, body: await api.orderBody({ amount: 1000 }) });
    const orderId = created.body.id as string;
    await h.client.workflow.getHandle<typeof orderPaymentSaga>(`order-payment-${orderId}`).result();

    const answers = await Promise.all(Array.from({ length: 5 }, () => refund(orderId, newKey(), { amount: 600 })));
    const accepted = answers.filter((answer) => answer.status === 201);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(accepted).toHaveLength(1);
    expect(refused.map((answer) => [answer.status, answer.body.error, answer.body.refundable])).toEqual(Array(4).fill([400, 'amount_too_large', 400]));
    const only = accepted[0] as ApiResponse;
    const result = await refundResult(only);

    const read = await api.get(tenant, `/v1/refunds/${only.body.id as string}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: only.body.id, orderId, amount: 600, status: 'succeeded', stripeRefundId: result.refundId, failureReason: null });
    const nested = await api.get(tenant, `/v1/orders/${orderId}/refunds/${only.body.id as string}`);
    expect(nested.body).toEqual(read.body);
    const view = await api.get(tenant, `/v1/orders/${orderId}`);
    expect(view.body).toMatchObject({ amountRefunded: 600, refundRequests: [{ id: only.body.id, status: 'succeeded', amount: 600 }] });
    expect((await stripeObjectsFor(h.stripe, orderId)).refunds).toHaveLength(1);
    expect(await ledgerRefunds(orderId)).toBe(1);
    await h.expectInvariants([orderId]);
  });

  it('a refund Stripe refuses later fails with its reason: visible through both GETs and the order, announced once as order.refund_failed, its reservation given back', async () => {
    const { orderId } = await completedOrder();
    // Someone refunds the whole charge by hand at Stripe: our budget does not know, Stripe does.
    const order = await api.get(tenant, `/v1/orders/${orderId}`);
    const paymentIntentId = (order.body.stripe as { paymentIntentId: string }).paymentIntentId;
    await h.stripe.refunds.create({ payment_intent: paymentIntentId });

    const accepted = await refund(orderId, newKey(), { amount: 1500 });
    expect(accepted.status).toBe(201);
    expect(accepted.body.status).toBe('pending');
    await expect(refundResult(accepted)).rejects.toBeInstanceOf(WorkflowFailedError);

    const id = accepted.body.id as string;
    const read = await api.get(tenant, `/v1/refunds/${id}`);
    expect(read.body).toMatchObject({ id, status: 'failed', stripeRefundId: null });
    expect(read.body.failureReason).toMatch(/refused by Stripe/);
    const view = await api.get(tenant, `/v1/orders/${orderId}`);
    expect(view.body).toMatchObject({ amountRefunded: 0, refunds: [], refundRequests: [{ id, status: 'failed' }] });

    const events = (await outboxEvents(h.db.pool, orderId)).filter((row) => row.event_type === 'order.refund_failed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event_key: id, payload: { amount_minor: 1500, status: 'completed', refund_request_id: id, refund_id: null } });
    expect(String(events[0]?.payload.reason)).toMatch(/refused by Stripe/);

    // The failed request's 1500 is refundable again, as far as our records know.
    const { rows } = await h.db.pool.query<{ reserved: string }>('select reserved_minor as reserved from refund_budgets where order_id = $1', [orderId]);
    expect(Number(rows[0]?.reserved)).toBe(0);
    expect(await ledgerRefunds(orderId)).toBe(0);
  });

  it('a refund request is its tenant’s: another tenant, another order or an unknown ID reads 404', async () => {
    const { orderId } = await completedOrder();
    const made = await refund(orderId, newKey(), { amount: 100 });
    await refundResult(made);
    const id = made.body.id as string;
    expect((await api.get(otherTenant, `/v1/refunds/${id}`)).status).toBe(404);
    expect((await api.get(otherTenant, `/v1/orders/${orderId}/refunds/${id}`)).status).toBe(404);
    const { orderId: another } = await completedOrder();
    expect((await api.get(tenant, `/v1/orders/${another}/refunds/${id}`)).body.error).toBe('refund_not_found');
    expect((await api.get(tenant, '/v1/refunds/rfd_unknown')).status).toBe(404);
  });
});
