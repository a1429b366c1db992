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
import { registerTenantRateLimit, type RateLimitSettings } from './rate-limit.js';
import { stripeWebhookRoutes } from './webhooks/stripe-webhook-route.js';
import { registerApiMetrics } from '../platform/telemetry/api-metrics.js';
import { registerApiTracing } from '../platform/telemetry/api-tracing.js';

export interface ApiDeps {
  db: Pool;
  /** Hands a recorded payment event to the order's workflow (a Temporal signal in production). */
  signalPaymentEvent: SignalPaymentEvent;
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
  /** Per-tenant limits of the orders API, counted in Redis across processes; absent = no limit. */
  rateLimit?: RateLimitSettings;
  /** Test seam of the orders API. */
  orderHooks?: Pick<CreateOrderDeps, 'afterWorkflowStart'>;
}

/**
 * The HTTP service: one fastify app built from its dependencies, each area a plugin with its own
 * body parsing (the webhook route keeps raw bytes; JSON routes such as orders parse JSON).
 */
export async function buildApiServer(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: deps.logger, disableRequestLogging: false, forceCloseConnections: true });
  // Counted and timed here; served by main.ts on API_METRICS_PORT, never on this app's port.
  registerApiMetrics(app);
  registerApiTracing(app);
  await registerOpenApi(app);
  await app.register(healthRoutes, { db: deps.db });
  await app.register(stripeWebhookRoutes, {
    db: deps.db,
    signalPaymentEvent: deps.signalPaymentEvent,
    secrets: deps.stripeWebhook.secrets,
    toleranceSeconds: deps.stripeWebhook.toleranceSeconds,
    handoff: deps.handoff ?? {},
  });
  const temporal = deps.temporal;
  if (temporal) {
    // One scope for the orders API and its per-tenant limit (webhooks and health are not limited).
    await app.register(async (orders) => {
      if (deps.rateLimit) await registerTenantRateLimit(orders, deps.rateLimit, deps.logger);
      await orders.register(orderRoutes, {
        db: deps.db,
        temporal,
        idempotency: deps.apiIdempotency ?? DEFAULT_API_IDEMPOTENCY,
        outcomeWaitMs: deps.outcomeWaitMs ?? DEFAULT_OUTCOME_WAIT_MS,
        ...deps.orderHooks,
      });
    });
  }
  return app;
}
