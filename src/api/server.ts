// The API's HTTP server: builds the fastify app (metrics, tracing, OpenAPI, health, the Stripe
// webhook route and, given Temporal, the orders API with its rate limit) from its dependencies.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { DEFAULT_API_IDEMPOTENCY, type ApiIdempotencySettings } from './idempotency/settings.js';
import type { SignalPaymentEvent } from '../messaging/webhooks/workflow-handoff.js';
import { healthRoutes } from './health.js';
import { registerOpenApi } from './openapi.js';
import { DEFAULT_OUTCOME_WAIT_MS, type CreateOrderDeps } from './orders/create-order.js';
import { orderRoutes } from './orders/order-routes.js';
import { createRateLimitHooks, type RateLimitSettings } from './rate-limit.js';
import { stripeWebhookRoutes } from './webhooks/stripe-webhook-route.js';
import { registerApiMetrics } from '../platform/telemetry/api-metrics.js';
import { registerApiTracing } from '../platform/telemetry/api-tracing.js';

/** How long a client may take to send one whole request, by default (API_REQUEST_TIMEOUT_MS). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** How much longer than the outcome wait a socket may stay silent before it is closed. */
const CONNECTION_IDLE_MARGIN_MS = 30_000;

export interface ApiDeps {
  db: Pool;
  /** Hands a recorded payment event to the order's workflow (a Temporal signal in production). */
  signalPaymentEvent: SignalPaymentEvent;
  /** Hands a recorded dispute event to the dispute's workflow (Signal-With-Start in production); absent, only recorded. */
  signalDispute?: SignalPaymentEvent;
  /** Starts an early fraud warning's workflow; absent, warnings are only recorded. */
  startFraudWarning?: SignalPaymentEvent;
  /** The webhook route's signing secrets (any one verifies a delivery, for rotation) and timestamp tolerance. */
  stripeWebhook: { secrets: string[]; toleranceSeconds: number };
  logger: FastifyBaseLogger;
  /** Hand-off retries; tests shorten them. */
  handoff?: { attempts?: number; retryMs?: number };
  /** Starts orders' workflows; the orders API (/v1/orders) is served only when it is given. */
  temporal?: { client: Client; taskQueue: string };
  /** Retention, tombstones and leases of Idempotency-Keys. Default: 7 days, 90 days, 30 s. */
  apiIdempotency?: ApiIdempotencySettings;
  /** How long POST /v1/orders waits for the payment's outcome before answering 202. Default 10 s. */
  outcomeWaitMs?: number;
  /** The orders API's limits, per client IP before auth and per tenant after it; absent = no limit. */
  rateLimit?: RateLimitSettings;
  /** How long a client may take to send a whole request (slow clients cannot pin sockets). Default 10 s. */
  requestTimeoutMs?: number;
  /** Proxies whose X-Forwarded-For names the client, for the per-IP limit; absent = none. */
  trustProxy?: string | null;
  /** Test seam of the orders API. */
  orderHooks?: Pick<CreateOrderDeps, 'afterWorkflowStart'>;
}

/**
 * The HTTP service: one fastify app built from its dependencies, each area a plugin with its own
 * body parsing (the webhook route keeps raw bytes; JSON routes such as orders parse JSON).
 */
export async function buildApiServer(deps: ApiDeps): Promise<FastifyInstance> {
  const outcomeWaitMs = deps.outcomeWaitMs ?? DEFAULT_OUTCOME_WAIT_MS;
  const requestTimeoutMs = deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    loggerInstance: deps.logger,
    disableRequestLogging: false,
    forceCloseConnections: true,
    // A client must send its whole request (headers and body) within requestTimeoutMs, or gets 408
    // and its socket closed; checked every second, not Node's default 30 s.
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: requestTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: 1_000 },
    // A socket with no traffic either way for this long is closed: longer than the longest wait the
    // API itself makes before answering (POST /v1/orders's outcome wait), so only idle clients go.
    connectionTimeout: outcomeWaitMs + CONNECTION_IDLE_MARGIN_MS,
    trustProxy: deps.trustProxy ?? false,
  });
  // Counted and timed here; served by main.ts on API_METRICS_PORT, never on this app's port.
  registerApiMetrics(app);
  registerApiTracing(app);
  await registerOpenApi(app);
  await app.register(healthRoutes, { db: deps.db });
  await app.register(stripeWebhookRoutes, {
    db: deps.db,
    signalPaymentEvent: deps.signalPaymentEvent,
    ...(deps.signalDispute && { signalDispute: deps.signalDispute }),
    ...(deps.startFraudWarning && { startFraudWarning: deps.startFraudWarning }),
    secrets: deps.stripeWebhook.secrets,
    toleranceSeconds: deps.stripeWebhook.toleranceSeconds,
    handoff: deps.handoff ?? {},
  });
  const temporal = deps.temporal;
  if (temporal) {
    // One scope for the orders API and its limits (webhooks and the cached health check are not limited).
    await app.register(async (orders) => {
      const limits = deps.rateLimit ? await createRateLimitHooks(deps.rateLimit, deps.logger) : null;
      if (limits) orders.addHook('onClose', () => limits.close());
      // Before the routes' bearer auth: an unknown key's flood is refused before its lookups.
      if (limits?.perIp) orders.addHook('onRequest', limits.perIp);
      await orders.register(orderRoutes, {
        db: deps.db,
        temporal,
        idempotency: deps.apiIdempotency ?? DEFAULT_API_IDEMPOTENCY,
        outcomeWaitMs,
        ...(limits?.perTenant && { afterAuth: limits.perTenant }),
        ...deps.orderHooks,
      });
    });
  }
  return app;
}
