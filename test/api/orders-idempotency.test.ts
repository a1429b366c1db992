// POST /v1/orders makes one order per intent: replays, a crash between start and stored response,
// racing requests, key reuse, and keys scoped by tenant and operation; and GET /v1/orders/:id.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey } from '../../src/api/idempotency/api-idempotency-store.js';
import type { orderPaymentSaga } from '../../src/workflows/index.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

let h: SagaHarness;
let api: OrdersApi;
let tenantA: string;
let tenantB: string;

beforeAll(async () => {
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  tenantA = await api.keyFor('tenant-a');
  tenantB = await api.keyFor('tenant-b');
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

const newKey = () => `idem-${randomUUID()}`;

async function finished(orderId: string) {
  return h.client.workflow.getHandle<typeof orderPaymentSaga>(`order-payment-${orderId}`).result();
}

async function apiOrdersFor(tenantId: string): Promise<number> {
  const { rows } = await h.db.pool.query<{ n: number }>('select count(*)::int as n from api_orders where tenant_id = $1', [tenantId]);
  return rows[0]?.n ?? 0;
}

async function keyRow(tenantId: string, key: string) {
  const { rows } = await h.db.pool.query<{ state: string; resource_id: string; status_code: number | null; retention_hours: number }>(
    `select state, resource_id, status_code, extract(epoch from expires_at - created_at)::int / 3600 as retention_hours
       from api_idempotency where tenant_id = $1 and operation = 'order.create' and idempotency_key = $2`,
    [tenantId, key],
  );
  return rows[0];
}

describe('POST /v1/orders: one intent, one order', () => {
  it('a lost response retried with the same key returns the same body with Idempotent-Replayed, and the order is charged once', async () => {
    const key = newKey();
    const body = await api.orderBody();
    const first = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    const retry = await api.post({ apiKey: tenantA, idempotencyKey: key, body });

    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ object: 'order', status: 'authorized', amount: 4200, currency: 'usd' });
    expect(first.body.id).toMatch(/^ord_[A-Za-z0-9_-]{24}$/);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await keyRow('tenant-a', key)).toMatchObject({ state: 'completed', resource_id: first.body.id, status_code: 201, retention_hours: 7 * 24 });

    const orderId = first.body.id as string;
    expect((await finished(orderId)).status).toBe('completed');
    expect((await stripeObjectsFor(h.stripe, orderId)).succeeded).toHaveLength(1);
    await h.expectInvariants([orderId]);
  });

  it('a crash between the workflow start and the stored response heals on retry: same order ID, the start attaches, one charge', async () => {
    const key = newKey();
    const body = await api.orderBody();
    api.setAfterWorkflowStart(() => Promise.reject(new Error('the API died after starting the workflow')));
    const crashed = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    api.setAfterWorkflowStart(undefined);
    expect(crashed.status).toBe(503);
    const pending = await keyRow('tenant-a', key);
    expect(pending?.state).toBe('pending');

    // A crashed holder cannot free its lease: while it lives, callers are told to come back.
    await h.db.pool.query(`update api_idempotency set locked_until = now() + interval '30 seconds' where idempotency_key = $1`, [key]);
    const whileLeased = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    expect(whileLeased.status).toBe(409);
    expect(whileLeased.body.error).toBe('idempotency_key_in_use');
    expect(Number(whileLeased.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    await h.db.pool.query(`update api_idempotency set locked_until = now() - interval '1 second' where idempotency_key = $1`, [key]);
    const healed = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    expect(healed.status).toBe(201);
    expect(healed.body.id).toBe(pending?.resource_id);
    expect((await finished(pending?.resource_id ?? '')).status).toBe('completed');
    expect((await stripeObjectsFor(h.stripe, pending?.resource_id ?? '')).succeeded).toHaveLength(1);
    await h.expectInvariants([pending?.resource_id ?? '']);
  });

  it('identical requests racing on one key make one order; every caller ends with the same body (a loser gets 409, then it)', async () => {
    const key = newKey();
    const body = await api.orderBody();
    const before = await apiOrdersFor('tenant-a');
    const racers = await Promise.all(Array.from({ length: 5 }, () => api.post({ apiKey: tenantA, idempotencyKey: key, body })));
    expect(racers.every((response) => response.status === 201 || response.status === 409)).toBe(true);
    const winners = racers.filter((response) => response.status === 201);
    expect(winners.length).toBeGreaterThanOrEqual(1);
    for (const loser of racers.filter((response) => response.status === 409)) {
      expect(loser.headers['retry-after']).toBeDefined();
    }
    const afterwards = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    for (const response of [...winners, afterwards]) expect(response.body).toEqual(winners[0]?.body);
    expect(await apiOrdersFor('tenant-a')).toBe(before + 1);
    await finished(afterwards.body.id as string);
    await h.expectInvariants([afterwards.body.id as string]);
  });

  it('the same key with another payload is refused with 422 naming the key, and nothing is started', async () => {
    const key = newKey();
    const body = await api.orderBody();
    const first = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    const before = await apiOrdersFor('tenant-a');
    const other = await api.post({ apiKey: tenantA, idempotencyKey: key, body: { ...body, amount: 9999 } });
    expect(first.status).toBe(201);
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('idempotency_key_reused');
    expect(other.body.message).toContain(key);
    expect(await apiOrdersFor('tenant-a')).toBe(before);
  });

  it('normalization: the same order with fields reordered and the currency in capitals is the same request', async () => {
    const key = newKey();
    const body = await api.orderBody();
    const first = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    const reordered = Object.fromEntries(Object.entries({ ...body, currency: 'USD' }).reverse());
    const again = await api.post({ apiKey: tenantA, idempotencyKey: key, body: reordered });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  it('keys are scoped by tenant: the same key from two tenants makes two distinct orders, each invisible to the other', async () => {
    const key = newKey();
    const body = await api.orderBody();
    const a = await api.post({ apiKey: tenantA, idempotencyKey: key, body });
    const b = await api.post({ apiKey: tenantB, idempotencyKey: key, body });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.body.id).not.toBe(b.body.id);
    expect((await api.get(tenantA, `/v1/orders/${a.body.id as string}`)).status).toBe(200);
    expect((await api.get(tenantB, `/v1/orders/${b.body.id as string}`)).status).toBe(200);
    expect((await api.get(tenantB, `/v1/orders/${a.body.id as string}`)).status).toBe(404);
    expect((await api.get(tenantA, `/v1/orders/${b.body.id as string}`)).status).toBe(404);
  });

  it('keys are scoped by operation: one key under two operations is two independent records', async () => {
    const key = newKey();
    const scope = { tenantId: 'tenant-a', key };
    const common = { requestHash: 'h', resourceType: 'x', leaseMs: 30_000, retentionMs: 60_000 };
    const create = await claimIdempotencyKey(h.db.pool, { ...scope, operation: 'order.create' }, { ...common, proposedResourceId: 'first' });
    const refund = await claimIdempotencyKey(h.db.pool, { ...scope, operation: 'refund.create' }, { ...common, requestHash: 'other', proposedResourceId: 'second' });
    expect(create).toEqual({ kind: 'proceed', resourceId: 'first', created: true });
    expect(refund).toEqual({ kind: 'proceed', resourceId: 'second', created: true });
  });
});

describe('GET /v1/orders/:id', () => {
  it('returns the status, the amounts and the Stripe IDs of the tenant’s order', async () => {
    const body = await api.orderBody({ amount: 1234, currency: 'eur' });
    const created = await api.post({ apiKey: tenantA, idempotencyKey: newKey(), body });
    const orderId = created.body.id as string;
    await finished(orderId);
    const read = await api.get(tenantA, `/v1/orders/${orderId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: orderId, status: 'completed', amount: 1234, currency: 'eur', sku: body.sku, quantity: 1 });
    const [intent] = (await stripeObjectsFor(h.stripe, orderId)).succeeded;
    expect(read.body.stripe).toEqual({ paymentIntentId: intent?.id, refundId: null });
  });

  it('an unknown order is 404', async () => {
    expect((await api.get(tenantA, '/v1/orders/ord_nope')).status).toBe(404);
  });
});
