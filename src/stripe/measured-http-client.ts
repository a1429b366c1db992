import Stripe from 'stripe';
import { activityMetricMeter, countReplay, recordStripeRequest } from '../telemetry/activity-metrics.js';

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
    try {
      const response = await inner.makeRequest(host, port, path, method, headers, requestData, protocol, timeout);
      const status = response.getStatusCode();
      recordStripeRequest(meter, endpoint, `${Math.floor(status / 100)}xx`, seconds());
      if (String(response.getHeaders()['idempotent-replayed']) === 'true') countReplay('stripe', meter);
      return response;
    } catch (error) {
      recordStripeRequest(meter, endpoint, 'error', seconds());
      throw error;
    }
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
