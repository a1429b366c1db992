// Tenants share nothing through the orders API: tenant A can neither reserve, probe nor drain
// tenant B's stock, cannot read or refund B's orders, and cannot name a tenant in its body.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { availableStock, setStock } from '../../src/orders/stock.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';

let h: SagaHarness;
let api: OrdersApi;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  keyA = await api.keyFor('tenant-a-isolation');
  keyB = await api.keyFor('tenant-b-isolation');
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

const newKey = () => `idem-${randomUUID()}`;
const line = (sku: string, quantity: number) => ({ customerId: 'cust-iso', amount: 50, currency: 'usd', paymentMethod: 'pm_card_visa', sku, quantity });

/** What a tenant sees of an order it placed, once its saga has ended: the fields that could leak another tenant's stock. */
async function endedOrder(apiKey: string, sku: string, quantity: number) {
  const created = await api.post({ apiKey, idempotencyKey: newKey(), body: line(sku, quantity) });
  expect(created.status).toBe(201);
  const orderId = created.body.id as string;
  await h.client.workflow.getHandle<typeof orderPaymentSaga>(workflowIdForOrder(orderId)).result();
  const read = await api.get(apiKey, `/v1/orders/${orderId}`);
  return { orderId, answer: created.body.status, status: read.body.status, reason: String(read.body.statusReason).replace(sku, '<sku>') };
}

describe("tenant A and tenant B's stock", () => {
  it("A cannot drain B's SKU: 1000 units at 0.50 each are out of stock for A, B's units stay, and A's card is never touched", async () => {
    const sku = `sku-b-${randomUUID().slice(0, 8)}`;
    await setStock(h.db.pool, sku, 3, 'tenant-b-isolation');
    const drain = await endedOrder(keyA, sku, 1000);
    expect(drain).toMatchObject({ answer: 'out_of_stock', status: 'compensated', reason: "OutOfStock: unknown SKU '<sku>'" });
    expect(await availableStock(h.db.pool, 'tenant-b-isolation', sku)).toBe(3);
    expect((await stripeObjectsFor(h.stripe, drain.orderId)).intents).toEqual([]);
    // B's own order takes its three units as ever.
    const own = await api.post({ apiKey: keyB, idempotencyKey: newKey(), body: line(sku, 3) });
    expect(own.body).toMatchObject({ status: 'authorized' });
    await h.client.workflow.getHandle<typeof orderPaymentSaga>(workflowIdForOrder(own.body.id as string)).result();
    expect(await availableStock(h.db.pool, 'tenant-b-isolation', sku)).toBe(0);
    await h.expectInvariants([drain.orderId, own.body.id as string]);
  });

  it("A cannot probe B's SKUs or levels: B's SKU, within or beyond B's stock, answers exactly as a SKU nobody stocks", async () => {
    const sku = `sku-b-${randomUUID().slice(0, 8)}`;
    await setStock(h.db.pool, sku, 5, 'tenant-b-isolation');
    const within = await endedOrder(keyA, sku, 1);
    const beyond = await endedOrder(keyA, sku, 6);
    const nobodys = await endedOrder(keyA, `sku-none-${randomUUID().slice(0, 8)}`, 1);
    const seen = ({ answer, status, reason }: typeof within) => ({ answer, status, reason });
    expect(seen(within)).toEqual(seen(nobodys));
    expect(seen(beyond)).toEqual(seen(nobodys));
    expect(await availableStock(h.db.pool, 'tenant-b-isolation', sku)).toBe(5);
  });

  it("the body cannot name a tenant, and A can neither read nor refund B's order (the same 404 as a missing one)", async () => {
    const named = await api.post({ apiKey: keyA, idempotencyKey: newKey(), body: { ...(await api.orderBody()), tenantId: 'tenant-b-isolation' } });
    expect(named.status).toBe(400);
    expect(named.body).toMatchObject({ error: 'invalid_order' });
    expect(JSON.stringify(named.body.problems)).toContain('tenantId');

    const ofB = await api.post({ apiKey: keyB, idempotencyKey: newKey(), body: await api.orderBody() });
    const orderId = ofB.body.id as string;
    await h.client.workflow.getHandle<typeof orderPaymentSaga>(workflowIdForOrder(orderId)).result();
    expect((await api.get(keyA, `/v1/orders/${orderId}`)).status).toBe(404);
    const refund = await api.app.inject({
      method: 'POST',
      url: `/v1/orders/${orderId}/refunds`,
      headers: { authorization: `Bearer ${keyA}`, 'idempotency-key': newKey(), 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(refund.statusCode).toBe(404);
    expect((await stripeObjectsFor(h.stripe, orderId)).refunds).toEqual([]);
  });

  it("an amount below the currency's Stripe minimum is a 400 that starts nothing", async () => {
    const sku = `sku-min-${randomUUID().slice(0, 8)}`;
    const body = { ...(await api.orderBody({ sku })), amount: 29, currency: 'gbp' };
    const refused = await api.post({ apiKey: keyA, idempotencyKey: newKey(), body });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_order' });
    expect(refused.body.problems).toEqual(["amount: amount must be at least 30 minor units for GBP (Stripe's minimum charge)"]);
    const { rows } = await h.db.pool.query('select 1 from api_orders where request @> $1', [JSON.stringify({ sku })]);
    expect(rows).toEqual([]);
  });
});
