import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { SignalPaymentEvent } from '../webhooks/workflow-handoff.js';
import { healthRoutes } from './health.js';
import { stripeWebhookRoutes } from './webhooks/stripe-webhook-route.js';

export interface ApiDeps {
  db: Pool;
  /** Hands a recorded payment event to the order's workflow (a Temporal signal in production). */
  signalPaymentEvent: SignalPaymentEvent;
  stripeWebhook: { secret: string; toleranceSeconds: number };
  logger: FastifyBaseLogger;
  /** Hand-off retries; tests shorten them. */
  handoff?: { attempts?: number; retryMs?: number };
}

/**
 * The HTTP service: one fastify app built from its dependencies, each area a plugin with its own
 * body parsing (the webhook route keeps raw bytes; JSON routes such as orders parse JSON).
 */
export async function buildApiServer(deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: deps.logger, disableRequestLogging: false, forceCloseConnections: true });
  await app.register(healthRoutes, { db: deps.db });
  await app.register(stripeWebhookRoutes, {
    db: deps.db,
    signalPaymentEvent: deps.signalPaymentEvent,
    secret: deps.stripeWebhook.secret,
    toleranceSeconds: deps.stripeWebhook.toleranceSeconds,
    handoff: deps.handoff ?? {},
  });
  return app;
}
