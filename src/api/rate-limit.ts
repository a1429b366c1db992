// The orders API's limits: per client IP before authentication, per tenant after it. Counted in
// process by default, in Redis (shared by every API process) when REDIS_URL is set, and in process
// again, said by a metric and a log line, while Redis does not answer: a limit never fails open.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { z } from 'zod';
import { ConfigError } from '../platform/config/config-error.js';
import { countRateLimitFallback, countRateLimited, type RateLimiterName } from '../platform/telemetry/api-metrics.js';

type Env = Record<string, string | undefined>;

/** The namespace of the limiter's Redis keys: `<prefix><limiter>:<tenant or IP>`, one counter per window. */
export const DEFAULT_RATE_LIMIT_KEY_PREFIX = 'order-payments:rate-limit:';

/** A Redis command slower than this is given up and the request counted in process instead. */
const REDIS_COMMAND_TIMEOUT_MS = 250;
const REDIS_CONNECT_TIMEOUT_MS = 2_000;

const perMinute = (fallback: number) =>
  z.coerce
    .number({ error: `must be a whole number of requests such as ${fallback} (0 turns the limit off)` })
    .int(`must be a whole number of requests such as ${fallback} (0 turns the limit off)`)
    .min(0, 'must be 0 (off) or more')
    .max(1_000_000, 'must be at most 1000000')
    .default(fallback);

const schema = z.object({
  /**
   * Requests per tenant per minute to the orders API. Default 600 (10 a second, sustained, per
   * tenant: far above a checkout's pace, low enough that one tenant's runaway retry loop cannot
   * starve the others). 0 turns the limit off.
   */
  API_RATE_LIMIT_PER_MINUTE: perMinute(600),
  /**
   * Requests per client IP per minute to the orders API, counted before the API key is looked up,
   * so a flood of unknown keys is refused without a database query. Default 1200. 0 turns it off
   * (behind a proxy that does this already). The client IP is the socket's, or with
   * API_TRUST_PROXY the one X-Forwarded-For names.
   */
  API_IP_RATE_LIMIT_PER_MINUTE: perMinute(1200),
  /**
   * The Redis that holds the counters every API process shares. Unset: each process counts for
   * itself (right for one API process; with several, each lets a tenant its whole limit).
   */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/[^\s/]+(\/\d{1,2})?\/?$/, 'must be a Redis URL such as redis://127.0.0.1:6379 (rediss:// for TLS, /N for database N)')
    .optional(),
});

export interface RateLimitSettings {
  /** Requests per tenant per window; 0 = no tenant limit. */
  max: number;
  /** Requests per client IP per window, before authentication; 0 = no IP limit. */
  perIpMax: number;
  /** The window. Always a minute from the environment; tests shorten it. */
  windowMs: number;
  /** Shared counters; null = this process counts alone. */
  redisUrl: string | null;
  /** Namespace of the Redis keys; tests use one of their own so parallel runs do not share counters. */
  keyPrefix: string;
}

export function loadRateLimitSettings(env: Env = process.env): RateLimitSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return {
    max: parsed.data.API_RATE_LIMIT_PER_MINUTE,
    perIpMax: parsed.data.API_IP_RATE_LIMIT_PER_MINUTE,
    windowMs: 60_000,
    redisUrl: parsed.data.REDIS_URL ?? null,
    keyPrefix: DEFAULT_RATE_LIMIT_KEY_PREFIX,
  };
}

/** The limiter's answer over the limit, rendered by the orders error handler as `{ error: 'rate_limited', message }`. */
class RateLimitedError extends Error {
  override readonly name = 'RateLimitedError';
  readonly statusCode = 429;
  readonly code = 'RATE_LIMITED';
}

/** One limit's decision for one request: let through or not, and what the headers say. */
interface Decision {
  allowed: boolean;
  remaining: number;
  msBeforeNext: number;
}

/** Where a limit counts: Redis when configured and answering, else this process's memory. */
interface Limit {
  name: RateLimiterName;
  max: number;
  consume(key: string): Promise<Decision>;
}

function decision(result: RateLimiterRes, allowed: boolean): Decision {
  return { allowed, remaining: Math.max(0, result.remainingPoints), msBeforeNext: Math.max(0, result.msBeforeNext) };
}

/**
 * A limit of `max` requests per key per window. With Redis, the count is Redis's; when a Redis
 * command fails (down, slow past 250 ms, not connected), the same request is counted by this
 * process's own limiter instead, the metric `order_payments_api_rate_limit_fallback_total`
 * counts it, and one warning per outage says so. The in-process count is per process, so with
 * several API processes a tenant may get up to that many times its limit during an outage: more
 * than it should, never unlimited.
 */
function createLimit(name: RateLimiterName, max: number, windowMs: number, keyPrefix: string, redis: Redis | null, outage: Outage): Limit {
  const duration = Math.max(1, Math.round(windowMs / 1000));
  const memory = new RateLimiterMemory({ points: max, duration, keyPrefix: `${keyPrefix}${name}` });
  const shared =
    redis === null ? null : new RateLimiterRedis({ storeClient: redis, points: max, duration, keyPrefix: `${keyPrefix}${name}`, rejectIfRedisNotReady: true });
  const count = async (limiter: RateLimiterMemory | RateLimiterRedis, key: string): Promise<Decision> => {
    try {
      return decision(await limiter.consume(key), true);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decision(rejection, false);
      throw rejection;
    }
  };
  return {
    name,
    max,
    async consume(key) {
      if (shared !== null) {
        try {
          const counted = await count(shared, key);
          outage.over();
          return counted;
        } catch (error) {
          outage.began(error);
          countRateLimitFallback(name);
        }
      }
      return count(memory, key);
    },
  };
}

/** One warning when Redis stops answering, one line when it answers again. */
interface Outage {
  began(error: unknown): void;
  over(): void;
}

function outageLog(logger: FastifyBaseLogger, where: string): Outage {
  let down = false;
  return {
    began(error) {
      if (down) return;
      down = true;
      logger.warn(
        { err: error, redis: where },
        'Redis does not answer: rate limits are enforced by each API process on its own until it does (order_payments_api_rate_limit_fallback_total counts those requests)',
      );
    },
    over() {
      if (!down) return;
      down = false;
      logger.info({ redis: where }, 'Redis answers again: rate limits are shared across API processes');
    },
  };
}

/** The hooks that enforce the limits, and the Redis connection to close with the server. */
export interface RateLimitHooks {
  /** onRequest, before authentication: the client IP's limit. */
  perIp: onRequestHookHandler | null;
  /** onRequest, after bearer auth set the tenant: the tenant's limit. */
  perTenant: onRequestHookHandler | null;
  close(): Promise<void>;
}

/**
 * The orders API's two limits, as onRequest hooks (before the body is read, long before the
 * handler claims an Idempotency-Key, so a 429 stores nothing and the same request later goes
 * through):
 *   - per client IP, before bearer auth: an unknown key costs a database lookup, so a flood of
 *     them from one address is refused before it reaches the pool;
 *   - per tenant, after bearer auth: one tenant's runaway client cannot starve the others.
 * Both answer 429 with Retry-After and the X-RateLimit-* headers.
 */
export async function createRateLimitHooks(settings: RateLimitSettings, logger: FastifyBaseLogger): Promise<RateLimitHooks> {
  if (settings.max === 0 && settings.perIpMax === 0) {
    logger.info('rate limits are off (API_RATE_LIMIT_PER_MINUTE=0, API_IP_RATE_LIMIT_PER_MINUTE=0)');
    return { perIp: null, perTenant: null, close: () => Promise.resolve() };
  }
  const redis = settings.redisUrl === null ? null : await connectRedis(settings.redisUrl, logger);
  const outage = outageLog(logger, settings.redisUrl === null ? 'none' : redactedUrl(settings.redisUrl));
  const hook = (limit: Limit, keyOf: (request: FastifyRequest) => string): onRequestHookHandler =>
    async function rateLimit(request: FastifyRequest, reply: FastifyReply) {
      const decided = await limit.consume(keyOf(request));
      const resetSeconds = Math.ceil(decided.msBeforeNext / 1000);
      void reply.header('x-ratelimit-limit', String(limit.max)).header('x-ratelimit-remaining', String(decided.remaining)).header('x-ratelimit-reset', String(resetSeconds));
      if (decided.allowed) return;
      countRateLimited(limit.name);
      void reply.header('retry-after', String(Math.max(1, resetSeconds)));
      const whose = limit.name === 'tenant' ? "this tenant's" : "this client address's";
      throw new RateLimitedError(
        `over ${whose} limit of ${limit.max} requests per ${settings.windowMs / 1000} s; retry after ${Math.max(1, resetSeconds)} s (see Retry-After). Nothing was stored under the Idempotency-Key`,
      );
    };
  return {
    perIp: settings.perIpMax === 0 ? null : hook(createLimit('ip', settings.perIpMax, settings.windowMs, settings.keyPrefix, redis, outage), (request) => request.ip),
    perTenant:
      settings.max === 0
        ? null
        : hook(createLimit('tenant', settings.max, settings.windowMs, settings.keyPrefix, redis, outage), (request) => {
            // Added after bearer auth: no tenant here is a wiring bug, never a request to let through.
            if (!request.tenantId) throw new Error('the tenant rate limit ran before bearer auth set the tenant');
            return request.tenantId;
          }),
    async close() {
      await redis?.quit().catch(() => {
        redis.disconnect();
      });
    },
  };
}

/** A Redis client that fails fast while disconnected (the request is then counted in process), waiting at most 2 s for its first answer. */
async function connectRedis(url: string, logger: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  });
  // Errors are reported per request, through the outage log; unheard, they would crash the process.
  redis.on('error', () => undefined);
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
  if (redis.status !== 'ready') {
    logger.warn({ redis: redactedUrl(url) }, 'Redis did not answer at start: rate limits are enforced by this API process on its own until it does');
  }
  return redis;
}

function redactedUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
