// The orders API's edges: bad input gets a clear 4xx and starts nothing, expired keys and their
// tombstones answer late retries, and `npm run api -- keys create` stores only the hash.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapApiIdempotency } from '../../src/api/idempotency/reaper.js';
import { DEFAULT_API_IDEMPOTENCY } from '../../src/api/idempotency/settings.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

let h: SagaHarness;
let api: OrdersApi;
let apiKey: string;

beforeAll(async () => {
  // A worker, so that a first POST is answered with its outcome (201) rather than 202 pending.
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  apiKey = await api.keyFor('tenant-edges');
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

const newKey = () => `idem-${randomUUID()}`;

async function counts() {
  const { rows } = await h.db.pool.query<{ keys: number; orders: number }>(
    'select (select count(*)::int from api_idempotency) as keys, (select count(*)::int from api_orders) as orders',
  );
  return rows[0];
}

describe('bad input gets a clear 4xx and starts nothing', () => {
  it('refuses a missing or unknown API key with 401 before reading the body', async () => {
    const before = await counts();
    const body = await api.orderBody();
    const missing = await api.post({ idempotencyKey: newKey(), body });
    const unknown = await api.post({ apiKey: 'opk_not-a-real-key', idempotencyKey: newKey(), body });
    const wrongScheme = await api.post({ idempotencyKey: newKey(), body, headers: { authorization: `Basic ${apiKey}` } });
    for (const response of [missing, unknown, wrongScheme]) {
      expect(response.status).toBe(401);
      expect(response.body.error).toBe('unauthorized');
    }
    expect(missing.body.message).toContain('Authorization: Bearer');
    expect(await counts()).toEqual(before);
  });

  it('refuses a missing, empty, oversized or non-ASCII Idempotency-Key with 400 explaining the contract', async () => {
    const before = await counts();
    const body = await api.orderBody();
    const missing = await api.post({ apiKey, body });
    const empty = await api.post({ apiKey, idempotencyKey: '', body });
    const oversized = await api.post({ apiKey, idempotencyKey: 'k'.repeat(256), body });
    for (const response of [missing, empty, oversized]) {
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_idempotency_key');
      expect(response.body.message).toContain('1 to 255');
    }
    expect(oversized.body.message).toContain('256 characters');
    // Non-ASCII and spaces: keys are compared byte for byte, so only visible ASCII is accepted.
    for (const bad of ['clé-1', 'two words', 'tab\there']) {
      const refused = await api.post({ apiKey, idempotencyKey: bad, body });
      expect(refused.status, bad).toBe(400);
      expect(refused.body.error).toBe('invalid_idempotency_key');
      expect(refused.body.message).toContain('spaces or non-ASCII characters');
    }
    expect(await counts()).toEqual(before);
    // The boundary itself is accepted (validated, then refused for its body here).
    const longest = await api.post({ apiKey, idempotencyKey: 'k'.repeat(255), body: {} });
    expect(longest.body.error).toBe('invalid_order');
  });

  it('refuses malformed JSON, wrong types, unknown fields, a wrong content type and a huge body', async () => {
    const before = await counts();
    const body = await api.orderBody();
    const malformed = await api.post({ apiKey, idempotencyKey: newKey(), payload: '{"customerId": "c1", ' });
    const wrongTypes = await api.post({ apiKey, idempotencyKey: newKey(), body: { ...body, amount: '42.00', quantity: 0, currency: 'xx' } });
    const unknownField = await api.post({ apiKey, idempotencyKey: newKey(), body: { ...body, orderId: 'mine' } });
    const notJson = await api.post({ apiKey, idempotencyKey: newKey(), payload: 'amount=1', headers: { 'content-type': 'text/plain' } });
    const huge = await api.post({ apiKey, idempotencyKey: newKey(), body: { ...body, customerId: 'c'.repeat(20_000) } });

    expect(malformed.status).toBe(400);
    expect(wrongTypes.status).toBe(400);
    expect(wrongTypes.body.error).toBe('invalid_order');
    expect(wrongTypes.body.problems).toEqual(
      expect.arrayContaining([expect.stringContaining('amount'), expect.stringContaining('quantity'), expect.stringContaining('currency')]),
    );
    expect(unknownField.status).toBe(400);
    expect(JSON.stringify(unknownField.body.problems)).toContain('orderId');
    expect(notJson.status).toBe(415);
    expect(notJson.body.message).toContain('application/json');
    expect(huge.status).toBe(413);
    expect(huge.body.message).toContain('16384 bytes');
    expect(await counts()).toEqual(before);
  });
});

describe('retention: expiry, tombstones and a late retry', () => {
  it('records expire after the configured retention (7 days by default)', async () => {
    const key = newKey();
    await h.db.pool.query(
      `insert into api_idempotency (tenant_id, operation, idempotency_key, request_hash, state, expires_at)
       values ('t', 'order.create', $1, 'h', 'pending', now() + $2 * interval '1 millisecond')`,
      [key, DEFAULT_API_IDEMPOTENCY.retentionMs],
    );
    const { rows } = await h.db.pool.query<{ days: number }>('select extract(epoch from expires_at - created_at)::int / 86400 as days from api_idempotency where idempotency_key = $1', [key]);
    expect(rows[0]?.days).toBe(7);
  });

  it('after the reaper compacts an expired key, a late retry of the same request gets 409 naming its order, another body 422, and nothing starts', async () => {
    const key = newKey();
    const body = await api.orderBody();
    const first = await api.post({ apiKey, idempotencyKey: key, body });
    expect(first.status).toBe(201);
    const orderId = first.body.id as string;

    // Time passes beyond the retention.
    await h.db.pool.query(`update api_idempotency set expires_at = now() - interval '1 second' where idempotency_key = $1`, [key]);
    const reaped = await reapApiIdempotency(h.db.pool, { tombstoneMs: DEFAULT_API_IDEMPOTENCY.tombstoneMs, batchSize: 1 });
    expect(reaped.compacted).toBeGreaterThanOrEqual(1);
    const { rows: left } = await h.db.pool.query('select 1 from api_idempotency where idempotency_key = $1', [key]);
    expect(left).toHaveLength(0);
    const { rows: tombstones } = await h.db.pool.query<{ resource_id: string }>('select resource_id from api_idempotency_tombstones where idempotency_key = $1', [key]);
    expect(tombstones).toEqual([{ resource_id: orderId }]);

    const before = await counts();
    const late = await api.post({ apiKey, idempotencyKey: key, body });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: 'idempotency_key_expired', resourceType: 'order', resourceId: orderId });
    expect(late.body.message).toContain(orderId);
    const lateOther = await api.post({ apiKey, idempotencyKey: key, body: { ...body, quantity: 2 } });
    expect(lateOther.status).toBe(422);
    expect(lateOther.body.message).toContain(key);
    expect(await counts()).toEqual(before);

    // Once the tombstone itself expires, the reaper deletes it and the key is free again.
    await h.db.pool.query(`update api_idempotency_tombstones set expires_at = now() - interval '1 second' where idempotency_key = $1`, [key]);
    expect((await reapApiIdempotency(h.db.pool, { tombstoneMs: DEFAULT_API_IDEMPOTENCY.tombstoneMs })).deleted).toBeGreaterThanOrEqual(1);
    const { rows: gone } = await h.db.pool.query('select 1 from api_idempotency_tombstones where idempotency_key = $1', [key]);
    expect(gone).toHaveLength(0);
  });
});

describe('npm run api -- keys create', () => {
  it('prints the key once, alone on the last line; only its hash is stored, and the key authenticates', async () => {
    const result = await runCli('src/api.ts', ['keys', 'create', '--tenant', 'cli-tenant'], { DATABASE_URL: h.db.url, LOG_LEVEL: 'silent' });
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    const key = lines.at(-1) ?? '';
    expect(key).toMatch(/^opk_[A-Za-z0-9_-]{43}$/);
    const { rows } = await h.db.pool.query<{ key_hash: string }>("select key_hash from api_keys where tenant_id = 'cli-tenant'");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key_hash).not.toContain(key);
    expect((await api.get(key, '/v1/orders/ord_none')).status).toBe(404);
  });

  it('refuses a malformed tenant ID with exit code 2 and stores nothing', async () => {
    const result = await runCli('src/api.ts', ['keys', 'create', '--tenant', 'bad tenant!'], { DATABASE_URL: h.db.url, LOG_LEVEL: 'silent' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('tenant ID');
    const { rows } = await h.db.pool.query("select 1 from api_keys where tenant_id = 'bad tenant!'");
    expect(rows).toHaveLength(0);
  });
});
