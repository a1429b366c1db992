// Per-tenant rate limits of the orders API, counted in Redis across API processes and failing
// open when Redis is unreachable, and their settings from the environment.
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { ConfigError } from '../platform/config/config-error.js';

type Env = Record<string, string | undefined>;

/** The namespace of the limiter's Redis keys: `<prefix><tenant ID>`, one counter per tenant and window. */
export const DEFAULT_RATE_LIMIT_KEY_PREFIX = 'order-payments:rate-limit:';

/** A Redis command slower than this is given up and the request let through (fail open). */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** How long the API waits for Redis at start before it serves without limits (and says so). */
const REDIS_CONNECT_TIMEOUT_MS = 2_000;

const schema = z.object({
  /**
   * Requests per tenant per minute to the orders API, counted across every API process.
   * Default 600 (10 a second, sustained, per tenant: far above a checkout's pace, low enough
   * that one tenant's runaway retry loop cannot starve the others). 0 turns the limit off.
   */
  API_RATE_LIMIT_PER_MINUTE: z.coerce
    .number({ error: 'must be a whole number of requests such as 600 (0 turns the limit off)' })
    .int('must be a whole number of requests such as 600 (0 turns the limit off)')
    .min(0, 'must be 0 (off) or more')
    .max(1_000_000, 'must be at most 1000000')
    .default(600),
  /** The Redis that holds the counters every API process shares. Default redis://127.0.0.1:6379. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/[^\s/]+(\/\d{1,2})?\/?$/, 'must be a Redis URL such as redis://127.0.0.1:6379 (rediss:// for TLS, /N for database N)')
    .default('redis://127.0.0.1:6379'),
});

export interface RateLimitSettings {
  /** Requests per tenant per window; 0 = no limit (nothing connects to Redis). */
  max: number;
  /** The window. Always a minute from the environment; tests shorten it. */
  windowMs: number;
  redisUrl: string;
  /** Namespace of the Redis keys; tests use one of their own so parallel runs do not share counters. */
  keyPrefix: string;
}

export function loadRateLimitSettings(env: Env = process.env): RateLimitSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return { max: parsed.data.API_RATE_LIMIT_PER_MINUTE, windowMs: 60_000, redisUrl: parsed.data.REDIS_URL, keyPrefix: DEFAULT_RATE_LIMIT_KEY_PREFIX };
}

/** The limiter's answer over the limit, rendered by the orders error handler as `{ error: 'rate_limited', message }`. */
class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  readonly statusCode = 429;
  readonly code = 'RATE_LIMITED';
}

function tenantKey(request: FastifyRequest): string {
  // The limit runs after bearer auth (a route-level hook, after the plugin's own): no tenant here is a wiring bug.
  if (!request.tenantId) throw new Error('the rate limit ran before bearer auth set the tenant');
  return request.tenantId;
}

/**
 * Per-tenant rate limits for every route registered in `scope` after this call (the orders
 * API), with @fastify/rate-limit and its Redis store.
 *
 * Why Redis and not PostgreSQL: the limit must hold across API processes, so the counter lives
 * in a shared store. The plugin's Redis store is one atomic script per request (INCR, and PEXPIRE
 * when the window opens), supported by the plugin itself; a PostgreSQL counter would be an
 * UPDATE per request on the payments database: row churn and vacuum work on the database whose
 * latency the payments depend on, for data that is worthless a minute later.
 *
 * The price is one more service that must run. When Redis is down or slow (over 250 ms), the
 * limiter fails OPEN: the request goes through and the outage is logged as a warning (once per
 * outage, and again when Redis is back). That is the right side to fail on here: the API behind
 * it is idempotent and has its own admission limits (leases, the database pool), so an
 * unenforced limit costs some fairness between tenants, while failing closed would turn a cache
 * outage into a payments outage.
 *
 * The hook is the plugin's default, onRequest, added to each route: route-level hooks run after
 * the orders plugin's bearer-auth hook, so an unauthenticated request is refused with 401 before
 * it counts, and the key is the tenant. It runs long before the handler claims the
 * Idempotency-Key, so a 429 stores nothing and the same request later goes through.
 */
export async function registerTenantRateLimit(scope: FastifyInstance, settings: RateLimitSettings, logger: FastifyBaseLogger): Promise<void> {
  if (settings.max === 0) {
    logger.info('rate limits are off (API_RATE_LIMIT_PER_MINUTE=0)');
    return;
  }
  const redis = new Redis(settings.redisUrl, {
    // Fail fast instead of queueing while disconnected: a queued request would wait for Redis.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  });
  const where = redactedUrl(settings.redisUrl);
  // One warning per outage, not one per reconnection attempt.
  const outage = { warned: false };
  redis.on('ready', () => {
    if (outage.warned) logger.info({ redis: where }, 'Redis answers again: per-tenant rate limits are enforced');
    outage.warned = false;
  });
  redis.on('error', (error: Error) => {
    if (outage.warned) return;
    outage.warned = true;
    logger.warn({ err: error, redis: where }, 'Redis is unreachable: per-tenant rate limits are NOT enforced (failing open) until it answers');
  });
  scope.addHook('onClose', async () => {
    await redis.quit().catch(() => {
      redis.disconnect();
    });
  });
  // Wait for the first answer (ready, or an error such as a refused connection), at most 2 s.
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, REDIS_CONNECT_TIMEOUT_MS);
    redis.once('ready', done);
    redis.once('error', done);
  });
  if (redis.status !== 'ready' && !outage.warned) {
    outage.warned = true;
    logger.warn({ redis: where }, 'Redis did not answer at start: per-tenant rate limits are NOT enforced (failing open) until it does');
  }

  await scope.register(fastifyRateLimit, {
    global: true,
    max: settings.max,
    timeWindow: settings.windowMs,
    redis,
    nameSpace: settings.keyPrefix,
    keyGenerator: tenantKey,
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new RateLimitedError(`over this tenant's limit of ${context.max} requests per ${settings.windowMs / 1000} s; retry after ${context.after} (see Retry-After). Nothing was stored under the Idempotency-Key`),
  });
}

function redactedUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
