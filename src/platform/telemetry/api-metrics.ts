// The API's Prometheus metrics: requests by route and status, Idempotency-Key claims, webhook
// signatures and events, and hand-offs to workflows.
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The API's metrics (issue 15), in one prom-client registry served on a listener of its own
 * (API_METRICS_PORT, default 9465; never the public port). Labels are routes, statuses and
 * outcomes: never a tenant, a key, an order ID or anything about the customer.
 */
export const apiMetricsRegistry = new Registry();
collectDefaultMetrics({ register: apiMetricsRegistry, prefix: 'order_payments_api_' });

const httpRequests = new Counter({
  name: 'order_payments_api_http_requests_total',
  help: 'HTTP requests answered, by method, route (the pattern, not the path) and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers: [apiMetricsRegistry],
});
const httpDuration = new Histogram({
  name: 'order_payments_api_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
  registers: [apiMetricsRegistry],
});
const idempotency = new Counter({
  name: 'order_payments_api_idempotency_total',
  help: 'Idempotency-Key claims, by operation and outcome: first, replay, in_progress (409), reused (422), expired (409)',
  labelNames: ['operation', 'outcome'] as const,
  registers: [apiMetricsRegistry],
});
const webhookSignatureFailures = new Counter({
  name: 'order_payments_api_webhook_signature_failures_total',
  help: 'Webhook deliveries refused because their Stripe-Signature did not verify',
  registers: [apiMetricsRegistry],
});
const webhookEvents = new Counter({
  name: 'order_payments_api_webhook_events_total',
  help: 'Verified webhook events, by inbox result: recorded (first delivery) or duplicate',
  labelNames: ['result'] as const,
  registers: [apiMetricsRegistry],
});
const handoffs = new Counter({
  name: 'order_payments_api_webhook_handoffs_total',
  help: "Hand-offs of payment events to their order's workflow, by outcome: signalled, no_workflow, failed (gave up after retries)",
  labelNames: ['outcome'] as const,
  registers: [apiMetricsRegistry],
});

/** The orders API's two limits (src/api/rate-limit.ts). */
export type RateLimiterName = 'ip' | 'tenant';

const rateLimited = new Counter({
  name: 'order_payments_api_rate_limited_total',
  help: 'Requests refused with 429, by limit: ip (per client address, before authentication) or tenant',
  labelNames: ['limiter'] as const,
  registers: [apiMetricsRegistry],
});
const rateLimitFallback = new Counter({
  name: 'order_payments_api_rate_limit_fallback_total',
  help: 'Requests counted by this API process alone because Redis did not answer (the limit held, per process), by limit',
  labelNames: ['limiter'] as const,
  registers: [apiMetricsRegistry],
});
// Present from the start at 0, so an alert on an increase sees the first one.
for (const limiter of ['ip', 'tenant'] as const) {
  rateLimited.inc({ limiter }, 0);
  rateLimitFallback.inc({ limiter }, 0);
}

export function countRateLimited(limiter: RateLimiterName): void {
  rateLimited.inc({ limiter });
}

export function countRateLimitFallback(limiter: RateLimiterName): void {
  rateLimitFallback.inc({ limiter });
}

/** Counts and times every request of this app (and its plugins), by route pattern. */
export function registerApiMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

export type IdempotencyOutcome = 'first' | 'replay' | 'in_progress' | 'reused' | 'expired';

/** The outcome of claiming an Idempotency-Key, as the caller is answered. */
export function countIdempotencyClaim(operation: string, claim: { kind: string; sameRequest?: boolean }): void {
  const outcome: IdempotencyOutcome =
    claim.kind === 'proceed'
      ? 'first'
      : claim.kind === 'replay'
        ? 'replay'
        : claim.kind === 'in-progress'
          ? 'in_progress'
          : claim.kind === 'expired' && claim.sameRequest
            ? 'expired'
            : 'reused';
  idempotency.inc({ operation, outcome });
}

export function countWebhookSignatureFailure(): void {
  webhookSignatureFailures.inc();
}

export function countWebhookEvent(duplicate: boolean): void {
  webhookEvents.inc({ result: duplicate ? 'duplicate' : 'recorded' });
}

export function countHandoff(outcome: 'signalled' | 'no_workflow' | 'failed'): void {
  handoffs.inc({ outcome });
}
