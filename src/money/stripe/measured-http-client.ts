// Stripe's Node HTTP client, measured: each request timed by endpoint and outcome, traced as a
// client span, and Stripe's idempotent replays counted.
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import Stripe from 'stripe';
import { activityMetricMeter, countReplay, recordStripeRequest } from '../../platform/telemetry/activity-metrics.js';
import { TraceAttribute } from '../../platform/telemetry/tracing.js';

const tracer = trace.getTracer('order-payments-stripe');

type HttpClient = ReturnType<typeof Stripe.createNodeHttpClient>;

/**
 * Stripe's own Node HTTP client, timed: every request records its endpoint, outcome and duration
 * (until Stripe's response headers), and a response carrying `Idempotent-Replayed: true` counts as
 * a replay answered by Stripe. The meter is the running activity's, taken when the request starts,
 * so requests made outside an activity record nothing.
 */
export function measuredHttpClient(inner: HttpClient = Stripe.createNodeHttpClient()): HttpClient {
  const measured: HttpClient = Object.create(inner) as HttpClient;
  measured.makeRequest = async (host, port, path, method, headers, requestData, protocol, timeout) => {
    const meter = activityMetricMeter();
    const endpoint = endpointOf(method, path);
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    // A client span per request (a no-op without a tracer provider): the route, never the IDs,
    // and the Idempotency-Key the request carries, which is the activity's.
    const idempotencyKey = headers['Idempotency-Key'] ?? headers['idempotency-key'];
    return tracer.startActiveSpan(
      `Stripe ${endpoint}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method.toUpperCase(),
          'url.template': endpoint.slice(endpoint.indexOf(' ') + 1),
          'server.address': host,
          ...(typeof idempotencyKey === 'string' && { [TraceAttribute.idempotencyKey]: idempotencyKey }),
        },
      },
      async (span) => {
        try {
          const response = await inner.makeRequest(host, port, path, method, headers, requestData, protocol, timeout);
          const status = response.getStatusCode();
          recordStripeRequest(meter, endpoint, `${Math.floor(status / 100)}xx`, seconds());
          const replayed = String(response.getHeaders()['idempotent-replayed']) === 'true';
          if (replayed) countReplay('stripe', meter);
          span.setAttributes({ 'http.response.status_code': status, 'stripe.idempotent_replayed': replayed });
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
          return response;
        } catch (error) {
          recordStripeRequest(meter, endpoint, 'error', seconds());
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  };
  return measured;
}

/** `POST /v1/payment_intents/pi_123/capture?x=1` → `POST /v1/payment_intents/{id}/capture`: no IDs in labels. */
export function endpointOf(method: string, path: string): string {
  const [pathname = ''] = path.split('?');
  // Stripe's paths are /v1/<collection>/<id>/<action>: the third segment is an object's ID (but
  // /search), and so is any other segment that is not a lowercase word.
  const segments = pathname.split('/').map((segment, index) => {
    if (index <= 1) return segment;
    const isId = index === 3 ? segment !== 'search' : !/^[a-z_]+$/.test(segment);
    return isId ? '{id}' : segment;
  });
  return `${method.toUpperCase()} ${segments.join('/')}`;
}
