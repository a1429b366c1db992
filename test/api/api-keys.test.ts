// The API key life cycle through `npm run api -- keys` (create, list, revoke): a revoked key gets
// 401 on its next request, other keys keep working, and each prefix names one key.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, listApiKeys, revokeApiKey, UnknownApiKeyPrefixError } from '../../src/api/auth/api-keys.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

let h: SagaHarness;
let api: OrdersApi;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  h = await startSagaHarness();
  api = await startOrdersApi(h);
  cliEnv = { DATABASE_URL: h.db.url, LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await api.app.close();
  await h.close();
});

const tenant = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

describe('the API key life cycle: create, list, revoke (npm run api -- keys ...)', () => {
  it('create → list shows the prefix, never the key → a request works → revoke → the next request is 401; list shows it revoked', async () => {
    const shop = tenant('life');
    const created = await runCli('src/api.ts', ['keys', 'create', '--tenant', shop], cliEnv);
    expect(created.code).toBe(0);
    const key = created.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^opk_[A-Za-z0-9_-]{43}$/);
    const prefix = key.slice(0, 10);

    const listed = await runCli('src/api.ts', ['keys', 'list', '--tenant', shop], cliEnv);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(prefix);
    expect(listed.stdout).not.toContain(key);
    expect(listed.stdout).not.toContain(key.slice(10));
    const row = listed.stdout.split('\n').find((line) => line.startsWith(prefix)) ?? '';
    // created_at, expires_at (none), revoked_at (not yet), scopes (all three by default).
    expect(row).toMatch(new RegExp(`^${prefix}\\s+${ISO.source}\\s+-\\s+-\\s+orders:write,refunds:write,disputes:write,read$`));

    const body = await api.orderBody();
    const before = await api.post({ apiKey: key, idempotencyKey: `idem-${randomUUID()}`, body });
    expect(before.status).toBe(201);

    const revoked = await runCli('src/api.ts', ['keys', 'revoke', '--prefix', prefix], cliEnv);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`API key ${prefix}… of tenant '${shop}' revoked at`);

    // No cache in between: the very next request with the key is refused, and nothing of it is stored.
    const refusedKey = `idem-${randomUUID()}`;
    const after = await api.post({ apiKey: key, idempotencyKey: refusedKey, body: await api.orderBody() });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('api_key_revoked');
    expect(after.body.message).toContain(`the API key ${prefix}… was revoked at`);
    expect(after.headers['www-authenticate']).toContain('invalid_token');
    const { rows: stored } = await h.db.pool.query('select 1 from api_idempotency where idempotency_key = $1', [refusedKey]);
    expect(stored).toHaveLength(0);
    expect((await api.get(key, `/v1/orders/${String(before.body.id)}`)).status).toBe(401);

    const relisted = await runCli('src/api.ts', ['keys', 'list', '--tenant', shop], cliEnv);
    const revokedRow = relisted.stdout.split('\n').find((line) => line.startsWith(prefix)) ?? '';
    expect(revokedRow).toMatch(new RegExp(`^${prefix}\\s+${ISO.source}\\s+-\\s+${ISO.source}\\s+orders:write,refunds:write,disputes:write,read$`));
  });

  it('revoking one key leaves the tenant’s other keys working', async () => {
    const shop = tenant('two-keys');
    const first = await createApiKey(h.db.pool, shop);
    const second = await createApiKey(h.db.pool, shop);
    const revoked = await revokeApiKey(h.db.pool, first.prefix);
    expect(revoked).toMatchObject({ prefix: first.prefix, tenantId: shop, alreadyRevoked: false });

    expect((await api.get(first.key, '/v1/orders/ord_none')).status).toBe(401);
    expect((await api.get(second.key, '/v1/orders/ord_none')).status).toBe(404);

    const keys = await listApiKeys(h.db.pool, shop);
    expect(keys.map((listed) => [listed.prefix, listed.revokedAt !== null])).toEqual(
      expect.arrayContaining([
        [first.prefix, true],
        [second.prefix, false],
      ]),
    );
    expect(keys).toHaveLength(2);
    expect(JSON.stringify(keys)).not.toContain(first.key);

    // Revoking again is harmless and keeps the first revocation time.
    const again = await revokeApiKey(h.db.pool, first.prefix);
    expect(again).toMatchObject({ alreadyRevoked: true, revokedAt: revoked.revokedAt });
  });

  it('revoking an unknown prefix exits 3 with one clear line and changes nothing; a malformed one exits 2', async () => {
    const shop = tenant('bystander');
    const bystander = await createApiKey(h.db.pool, shop);

    const unknown = await runCli('src/api.ts', ['keys', 'revoke', '--prefix', 'opk_zzzzzz'], cliEnv);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr.trim()).toBe("api: no API key has the prefix 'opk_zzzzzz' (list a tenant's keys with: npm run api -- keys list --tenant <id>)");
    await expect(revokeApiKey(h.db.pool, 'opk_zzzzzz')).rejects.toBeInstanceOf(UnknownApiKeyPrefixError);

    const malformed = await runCli('src/api.ts', ['keys', 'revoke', '--prefix', 'opk_%'], cliEnv);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("'opk_%' is not an API key prefix");

    const missing = await runCli('src/api.ts', ['keys', 'revoke'], cliEnv);
    expect(missing.code).toBe(2);

    expect((await listApiKeys(h.db.pool, shop))[0]?.revokedAt).toBeNull();
    expect((await api.get(bystander.key, '/v1/orders/ord_none')).status).toBe(404);
  });

  it('keys list of a tenant without keys says so; a malformed tenant ID exits 2', async () => {
    const none = await runCli('src/api.ts', ['keys', 'list', '--tenant', tenant('nobody')], cliEnv);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/has no API keys/);
    const bad = await runCli('src/api.ts', ['keys', 'list', '--tenant', 'bad tenant!'], cliEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('tenant ID');
  });

  it('each key’s prefix is unique, so revoke --prefix names exactly one key', async () => {
    const { rows } = await h.db.pool.query<{ n: number }>(
      "select count(*)::int as n from pg_constraint where conname = 'api_keys_key_prefix_key' and contype = 'u'",
    );
    expect(rows[0]?.n).toBe(1);
    const shop = tenant('unique');
    const { prefix } = await createApiKey(h.db.pool, shop);
    await expect(
      h.db.pool.query("insert into api_keys (key_hash, tenant_id, key_prefix) values (repeat('a', 64), $1, $2)", [shop, prefix]),
    ).rejects.toMatchObject({ code: '23505' });
  });
});

describe('API key scopes and expiry', () => {
  const post = (apiKey: string) => api.post({ apiKey, idempotencyKey: `idem-${randomUUID()}`, body: { customerId: 'c', amount: 100, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'none', quantity: 1 } });
  const refund = (apiKey: string) =>
    api.app.inject({ method: 'POST', url: '/v1/orders/ord_none/refunds', headers: { authorization: `Bearer ${apiKey}`, 'idempotency-key': `idem-${randomUUID()}`, 'content-type': 'application/json' }, payload: '{}' });

  it('a key may do only what its scopes name: a refused scope is a 403 that names the scope, before anything is read or stored', async () => {
    const shop = tenant('scoped');
    const reader = (await createApiKey(h.db.pool, shop, { scopes: ['read'] })).key;
    const writer = (await createApiKey(h.db.pool, shop, { scopes: ['orders:write'] })).key;
    const refunder = (await createApiKey(h.db.pool, shop, { scopes: ['refunds:write'] })).key;

    const refused = await post(reader);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'insufficient_scope' });
    expect(refused.body.message).toContain('this request needs orders:write');
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="orders:write"');
    expect((await api.get(reader, '/v1/orders/ord_none')).status).toBe(404);
    expect((await refund(reader)).statusCode).toBe(403);

    expect((await api.get(writer, '/v1/orders/ord_none')).status).toBe(403);
    expect((await refund(writer)).statusCode).toBe(403);
    expect((await post(refunder)).status).toBe(403);
    expect((await api.get(refunder, '/v1/orders/ord_none')).status).toBe(403);
    // The refund route's own answer (no such order): past the scope check.
    expect((await refund(refunder)).statusCode).toBe(404);
    const { rows } = await h.db.pool.query('select 1 from api_idempotency where tenant_id = $1', [shop]);
    expect(rows).toEqual([]);
  });

  it('an expired key is a 401 api_key_expired, decided by the database clock on every request', async () => {
    const shop = tenant('expiring');
    const { key, prefix } = await createApiKey(h.db.pool, shop, { expiresAt: new Date(Date.now() + 60 * 60 * 1000) });
    expect((await api.get(key, '/v1/orders/ord_none')).status).toBe(404);
    await h.db.pool.query(`update api_keys set created_at = now() - interval '2 days', expires_at = now() - interval '1 second' where key_prefix = $1`, [prefix]);
    const expired = await api.get(key, '/v1/orders/ord_none');
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ error: 'api_key_expired' });
    expect(expired.body.message).toContain(`the API key ${prefix}… expired at`);
  });

  it('keys create --scopes --expires-in-days makes a narrower key, keys list shows both, and an unknown scope exits 2', async () => {
    const shop = tenant('cli-scoped');
    const created = await runCli('src/api.ts', ['keys', 'create', '--tenant', shop, '--scopes', 'read,orders:write', '--expires-in-days', '30'], cliEnv);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/\(scopes orders:write, read; expires \d{4}-/);
    const key = created.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect((await refund(key)).statusCode).toBe(403);
    const listed = await runCli('src/api.ts', ['keys', 'list', '--tenant', shop], cliEnv);
    expect(listed.stdout).toMatch(new RegExp(`^${key.slice(0, 10)}\\s+${ISO.source}\\s+${ISO.source}\\s+-\\s+orders:write,read$`, 'm'));
    const bad = await runCli('src/api.ts', ['keys', 'create', '--tenant', shop, '--scopes', 'admin'], cliEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'admin' is not a list of API key scopes");
    const never = await runCli('src/api.ts', ['keys', 'create', '--tenant', shop, '--expires-in-days', '0'], cliEnv);
    expect(never.code).toBe(2);
  });
});
