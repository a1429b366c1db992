// What holds before authentication and at the socket: a flood of unknown API keys from one address
// is refused before it reaches the database pool; /healthz costs one query a second however often it
// is asked; a client that sends its request slowly gets 408 and loses its socket.
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import type { Pool, QueryResult } from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApiServer } from '../../src/api/server.js';
import { startOrdersApi } from '../support/api.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';

let h: SagaHarness;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  h = await startSagaHarness({ worker: false });
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  await h.close();
});

/** The API's pool, counting the statements that match `pattern`. */
function counting(pool: Pool, pattern: RegExp): { pool: Pool; count: () => number } {
  let seen = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<QueryResult>;
  const proxy = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
      return (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text ?? '';
        if (pattern.test(text)) seen += 1;
        return query(...args);
      };
    },
  });
  return { pool: proxy, count: () => seen };
}

describe('before authentication', () => {
  it('an unknown-key flood from one address costs the database the per-IP limit of lookups, not one per request; other clients go on', async () => {
    const lookups = counting(h.db.servicePool('api'), /from api_keys/);
    const api = await startOrdersApi(h, undefined, {
      db: lookups.pool,
      rateLimit: { max: 0, perIpMax: 20, windowMs: 60_000, redisUrl: null, keyPrefix: `test:ip:${randomUUID()}:` },
    });
    closers.push(() => api.app.close());
    const goodKey = await api.keyFor('tenant-flood-bystander');

    // 300 requests at once, each with a fresh random key, from one address.
    const flood = await Promise.all(
      Array.from({ length: 300 }, () =>
        api.app.inject({ method: 'GET', url: '/v1/orders/ord_none', remoteAddress: '203.0.113.7', headers: { authorization: `Bearer opk_${randomBytes(32).toString('base64url')}` } }),
      ),
    );
    const statuses = flood.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(280);
    expect(lookups.count()).toBe(20);
    const limited = flood.find((response) => response.statusCode === 429);
    expect(JSON.parse(limited?.body ?? '{}')).toMatchObject({ error: 'rate_limited' });
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);

    // A client at another address, with a real key, is served as if nothing had happened.
    const bystander = await api.app.inject({ method: 'GET', url: '/v1/orders/ord_none', remoteAddress: '198.51.100.2', headers: { authorization: `Bearer ${goodKey}` } });
    expect(bystander.statusCode).toBe(404);
    expect(lookups.count()).toBe(21);
  });
});

describe('GET /healthz', () => {
  it('answers a thousand probes from one database check, and checks again only after a second', async () => {
    const checks = counting(h.db.servicePool('api'), /^select 1$/);
    const app = await buildApiServer({
      db: checks.pool,
      signalPaymentEvent: () => Promise.resolve('no-workflow'),
      stripeWebhook: { secrets: ['whsec_request_limits'], toleranceSeconds: 300 },
      logger: pino({ level: 'silent' }),
    });
    closers.push(() => app.close());
    const probes = await Promise.all(Array.from({ length: 1000 }, () => app.inject({ method: 'GET', url: '/healthz' })));
    expect(new Set(probes.map((probe) => probe.statusCode))).toEqual(new Set([200]));
    expect(checks.count()).toBe(1);
    await vi.waitFor(async () => {
      await app.inject({ method: 'GET', url: '/healthz' });
      expect(checks.count()).toBe(2);
    }, { timeout: 5_000, interval: 300 });
  });
});

describe('at the socket', () => {
  it('a client that sends its request slowly gets 408 and its socket closed once the request timeout passes', async () => {
    const app = await buildApiServer({
      db: h.db.servicePool('api'),
      signalPaymentEvent: () => Promise.resolve('no-workflow'),
      stripeWebhook: { secrets: ['whsec_request_limits'], toleranceSeconds: 300 },
      logger: pino({ level: 'silent' }),
      requestTimeoutMs: 1_000,
    });
    closers.push(() => app.close());
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
    });
    socket.on('close', () => {
      closed = true;
    });
    socket.on('error', () => undefined);
    // Headers, and one byte of a promised 500-byte body; then nothing, as a slow-loris client does.
    socket.write('POST /webhooks/stripe HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{');
    await vi.waitFor(() => {
      expect(closed).toBe(true);
    }, { timeout: 10_000, interval: 100 });
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });
});
