// The orders API's per-tenant limit: counted in process by default, in Redis shared by several API
// processes when REDIS_URL is set, and in process again while Redis is down (never failing open);
// 429 with Retry-After, auth first, nothing stored under the key; and the settings.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/api/auth/api-keys.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { loadRateLimitSettings, type RateLimitSettings } from '../../src/api/rate-limit.js';
import { ConfigError } from '../../src/platform/config/config-error.js';
import { apiMetricsRegistry } from '../../src/platform/telemetry/api-metrics.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';
import { startTestRedis, type TestRedis } from '../support/redis.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** This file's own namespace: parallel runs (and other files) never share a counter with it. */
const PREFIX = `test:rate-limit:${randomUUID()}:`;

let h: SagaHarness;
let redis: TestRedis;
const started: OrdersApi[] = [];

const limit = (overrides: Partial<RateLimitSettings> = {}): RateLimitSettings => ({
  max: 5,
  perIpMax: 0,
  windowMs: 60_000,
  redisUrl: redis.url,
  keyPrefix: PREFIX,
  ...overrides,
});
const tenant = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const newKey = () => `idem-${randomUUID()}`;
/** The tenant's counter in Redis, as rate-limiter-flexible keeps it. */
const counter = (tenantId: string) => redis.client.get(`${PREFIX}tenant:${tenantId}`);

async function api(rateLimit: RateLimitSettings, logger?: Logger): Promise<OrdersApi> {
  const instance = await startOrdersApi(h, undefined, { rateLimit, ...(logger ? { logger } : {}) });
  started.push(instance);
  return instance;
}

async function storedKeys(tenantId: string) {
  const { rows } = await h.db.pool.query<{ idempotency_key: string; state: string }>(
    'select idempotency_key, state from api_idempotency where tenant_id = $1 order by created_at',
    [tenantId],
  );
  return rows;
}

async function fallbackCount(limiter: 'tenant' | 'ip'): Promise<number> {
  const metric = await apiMetricsRegistry.getSingleMetric('order_payments_api_rate_limit_fallback_total')?.get();
  return metric?.values.find((value) => value.labels.limiter === limiter)?.value ?? 0;
}

beforeAll(async () => {
  h = await startSagaHarness();
  redis = await startTestRedis();
});
afterAll(async () => {
  for (const instance of started) await instance.app.close();
  await redis.close();
  await h.close();
});

describe('per-tenant rate limits in one process, without Redis', () => {
  it('counts in memory by default: the 6th request of a tenant is 429, another tenant is unaffected', async () => {
    const a = await api(limit({ redisUrl: null }));
    const [busy, calm] = [tenant('mem-busy'), tenant('mem-calm')];
    const busyKey = await a.keyFor(busy);
    const calmKey = await a.keyFor(calm);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await a.get(busyKey, '/v1/orders/ord_none')).status);
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429]);
    expect((await a.get(calmKey, '/v1/orders/ord_none')).status).toBe(404);
    expect(await counter(busy)).toBeNull();
  });
});

describe('per-tenant rate limits, counted in Redis across API processes', () => {
  it('two API instances share one tenant’s limit: 3 requests on A and 3 on B, the 6th is 429 with Retry-After; another tenant is unaffected', async () => {
    const a = await api(limit());
    const b = await api(limit());
    const busy = tenant('busy');
    const calm = tenant('calm');
    const busyKey = await a.keyFor(busy);
    const calmKey = await a.keyFor(calm);

    const answers = [];
    for (const server of [a, a, a, b, b]) answers.push(await server.post({ apiKey: busyKey, idempotencyKey: newKey(), body: await server.orderBody() }));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    // The remaining count is shared: B's first answer already knows about A's three.
    expect(answers.map((answer) => answer.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);

    const limitedKey = newKey();
    const sixth = await b.post({ apiKey: busyKey, idempotencyKey: limitedKey, body: await b.orderBody() });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ error: 'rate_limited' });
    expect(sixth.body.message).toMatch(/limit of 5 requests per 60 s/);
    const retryAfter = Number(sixth.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The limit is the tenant's, not the route's: a GET on the other instance is limited too.
    const get = await a.get(busyKey, '/v1/orders/ord_none');
    expect(get.status).toBe(429);
    expect(get.headers['retry-after']).toBeDefined();
    expect(await counter(busy)).toBe('7');

    // The limited request was not stored under its key; the five before it were.
    const stored = await storedKeys(busy);
    expect(stored).toHaveLength(5);
    expect(stored.map((row) => row.idempotency_key)).not.toContain(limitedKey);

    // Another tenant on the same instances has its own budget.
    expect((await a.post({ apiKey: calmKey, idempotencyKey: newKey(), body: await a.orderBody() })).status).toBe(201);
    expect((await b.get(calmKey, '/v1/orders/ord_none')).status).toBe(404);
  });

  it('bearer auth runs first: a missing or unknown key is a 401, even for a tenant over its limit, and is not counted', async () => {
    const a = await api(limit({ max: 1 }));
    const over = tenant('over');
    const apiKey = await a.keyFor(over);
    expect((await a.get(apiKey, '/v1/orders/ord_none')).status).toBe(404);
    expect((await a.get(apiKey, '/v1/orders/ord_none')).status).toBe(429);

    const missing = await a.post({ idempotencyKey: newKey(), body: await a.orderBody() });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe('unauthorized');
    const unknown = await a.get('opk_not-a-key-of-anyone', '/v1/orders/ord_none');
    expect(unknown.status).toBe(401);
    expect(unknown.headers['retry-after']).toBeUndefined();
    expect(await counter(over)).toBe('2');
  });

  it('a 429 with an Idempotency-Key stores nothing: once the window has passed, the same key goes through with 201 and is not a replay', async () => {
    const a = await api(limit({ max: 1, windowMs: 3_000 }));
    const shop = tenant('retrying');
    const apiKey = await a.keyFor(shop);
    expect((await a.get(apiKey, '/v1/orders/ord_none')).status).toBe(404);

    const key = newKey();
    const body = await a.orderBody();
    const limited = await a.post({ apiKey, idempotencyKey: key, body });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
    expect(await storedKeys(shop)).toEqual([]);
    const { rows: orders } = await h.db.pool.query('select 1 from api_orders where tenant_id = $1', [shop]);
    expect(orders).toHaveLength(0);

    // The client does what Retry-After says, then retries the same request with the same key.
    await sleep(retryAfter * 1000 + 100);
    const retried = await a.post({ apiKey, idempotencyKey: key, body });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body).toMatchObject({ object: 'order', status: 'authorized' });
    expect(await storedKeys(shop)).toEqual([{ idempotency_key: key, state: 'completed' }]);
  });

  it('a start flood while Redis is down is still limited: each process counts on its own, says so in a line and a metric, and shares again once Redis is back', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const a = await api(limit({ max: 3 }), logger);
    const b = await api(limit({ max: 3 }), logger);
    const flooding = tenant('outage');
    const apiKey = await a.keyFor(flooding);
    const before = await fallbackCount('tenant');
    await redis.stop();
    try {
      // Twelve order starts, six on each process: each lets its own three through, and no more.
      const answers = [];
      for (let i = 0; i < 12; i++) {
        const server = i % 2 === 0 ? a : b;
        answers.push(await server.post({ apiKey, idempotencyKey: newKey(), body: await server.orderBody() }));
      }
      expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201, 429, 429, 429, 429, 429, 429]);
      expect(answers[6]?.body).toMatchObject({ error: 'rate_limited' });
      expect(await storedKeys(flooding)).toHaveLength(6);
      expect((await fallbackCount('tenant')) - before).toBe(12);
      // One warning per process for the whole outage, not one per request.
      expect(lines.filter((line) => line.includes('Redis does not answer: rate limits are enforced by each API process on its own'))).toHaveLength(2);
    } finally {
      await redis.start();
    }
    // Redis back: the next request is counted there again (a fresh window in Redis), and said so.
    const other = tenant('after-outage');
    const otherKey = await a.keyFor(other);
    await vi.waitFor(async () => {
      expect((await a.get(otherKey, '/v1/orders/ord_none')).status).toBe(404);
      expect(await counter(other)).not.toBeNull();
    }, { timeout: 15_000, interval: 250 });
    expect(lines.some((line) => line.includes('Redis answers again: rate limits are shared across API processes'))).toBe(true);
  });

  it('API_RATE_LIMIT_PER_MINUTE=0 and API_IP_RATE_LIMIT_PER_MINUTE=0 turn the limits off without connecting to Redis', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const a = await api(limit({ max: 0, perIpMax: 0, redisUrl: 'redis://127.0.0.1:1' }), logger);
    const apiKey = await a.keyFor(tenant('unlimited'));
    for (let i = 0; i < 3; i++) expect((await a.get(apiKey, '/v1/orders/ord_none')).status).toBe(404);
    expect(lines).toEqual([]);
  });
});

describe('rate-limit settings', () => {
  it('defaults to 600 a minute per tenant and 1200 per client address, counted in this process', () => {
    expect(loadRateLimitSettings({})).toEqual({ max: 600, perIpMax: 1200, windowMs: 60_000, redisUrl: null, keyPrefix: 'order-payments:rate-limit:' });
    expect(loadRateLimitSettings({ API_RATE_LIMIT_PER_MINUTE: '0', REDIS_URL: 'rediss://cache.internal:6380/2' })).toMatchObject({ max: 0, redisUrl: 'rediss://cache.internal:6380/2' });
  });

  it('refuses bad values, naming the setting and how to fix it', () => {
    const bad = () => loadRateLimitSettings({ API_RATE_LIMIT_PER_MINUTE: 'lots', REDIS_URL: 'http://127.0.0.1:6379' });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(/API_RATE_LIMIT_PER_MINUTE: must be a whole number of requests such as 600/);
    expect(bad).toThrow(/REDIS_URL: must be a Redis URL such as redis:\/\/127.0.0.1:6379/);
    expect(() => loadRateLimitSettings({ API_RATE_LIMIT_PER_MINUTE: '-1' })).toThrow(/must be 0 \(off\) or more/);
    expect(() => loadRateLimitSettings({ API_RATE_LIMIT_PER_MINUTE: '1.5' })).toThrow(/whole number/);
  });

  it('two `npm run api` processes share one tenant’s limit through Redis: 3 requests on each, the 6th is 429', async () => {
    const busy = tenant('procs');
    const apiKey = (await createApiKey(h.db.pool, busy)).key;
    const ports = [await findFreePort(), await findFreePort()];
    const processes = ports.map((port) =>
      execa(process.execPath, ['--import', 'tsx', 'src/api.ts'], {
        cwd: ROOT,
        reject: false,
        env: {
          API_PORT: String(port),
          API_METRICS_PORT: '0',
          API_RATE_LIMIT_PER_MINUTE: '5',
          REDIS_URL: redis.url,
          DATABASE_URL: h.db.serviceUrl('api'),
          TEMPORAL_ADDRESS: h.temporalAddress,
          TEMPORAL_TASK_QUEUE: h.taskQueue,
          STRIPE_WEBHOOK_SECRET: 'whsec_rate_limit_suite',
          LOG_LEVEL: 'warn',
        },
      }),
    );
    try {
      for (const port of ports) {
        await vi.waitFor(async () => { expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200); }, { timeout: 30_000, interval: 200 });
      }
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const port = ports[i % 2] ?? 0;
        const response = await fetch(`http://127.0.0.1:${port}/v1/orders/ord_none`, { headers: { authorization: `Bearer ${apiKey}` } });
        statuses.push(response.status);
        if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      expect(statuses).toEqual([404, 404, 404, 404, 404, 429]);
      // Both counted in the one Redis, under the default namespace.
      expect(await redis.client.get(`order-payments:rate-limit:tenant:${busy}`)).toBe('6');
    } finally {
      for (const child of processes) child.kill('SIGTERM');
      await Promise.all(processes);
    }
  });

  it('npm run api exits 2 on a bad value before anything starts, with one line per problem', async () => {
    const result = await runCli('src/api.ts', [], {
      DATABASE_URL: h.db.url,
      STRIPE_WEBHOOK_SECRET: 'whsec_rate_limit_suite',
      API_RATE_LIMIT_PER_MINUTE: 'lots',
      LOG_LEVEL: 'silent',
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual(['api: API_RATE_LIMIT_PER_MINUTE: must be a whole number of requests such as 600 (0 turns the limit off)']);
  });
});
