// Proves the metrics port settings' defaults and refusals, and that Stripe endpoint labels name the
// route, never an object ID or a query.
import { describe, expect, it } from 'vitest';
import { loadMetricsListenerSettings, loadWorkerMetricsSettings } from '../../src/platform/config/settings.js';
import { endpointOf } from '../../src/money/stripe/measured-http-client.js';

describe('metrics settings', () => {
  it('WORKER_METRICS_PORT: default 9464, 0 turns it off, anything else not a port is refused', () => {
    expect(loadWorkerMetricsSettings({})).toEqual({ port: 9464 });
    expect(loadWorkerMetricsSettings({ WORKER_METRICS_PORT: ' ' })).toEqual({ port: 9464 });
    expect(loadWorkerMetricsSettings({ WORKER_METRICS_PORT: '0' })).toEqual({ port: null });
    expect(loadWorkerMetricsSettings({ WORKER_METRICS_PORT: '19464' })).toEqual({ port: 19464 });
    expect(() => loadWorkerMetricsSettings({ WORKER_METRICS_PORT: 'on' })).toThrow(/WORKER_METRICS_PORT: must be a port number such as 9464/);
    expect(() => loadWorkerMetricsSettings({ WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT: must be between 0 and 65535/);
  });

  it("a service's metrics listener: its own variable and default, 127.0.0.1 unless METRICS_HOST says otherwise", () => {
    expect(loadMetricsListenerSettings('API_METRICS_PORT', 9465, {})).toEqual({ port: 9465, host: '127.0.0.1' });
    expect(loadMetricsListenerSettings('METRICS_PORT', 9466, { METRICS_PORT: '0' })).toEqual({ port: null, host: '127.0.0.1' });
    expect(loadMetricsListenerSettings('METRICS_PORT', 9467, { METRICS_PORT: '9999', METRICS_HOST: '0.0.0.0' })).toEqual({ port: 9999, host: '0.0.0.0' });
    expect(() => loadMetricsListenerSettings('API_METRICS_PORT', 9465, { API_METRICS_PORT: '-1' })).toThrow(/API_METRICS_PORT: must be between 0 and 65535/);
  });
});

describe('Stripe endpoint labels', () => {
  it('name the route, never an object ID or a query', () => {
    expect(endpointOf('post', '/v1/payment_intents')).toBe('POST /v1/payment_intents');
    expect(endpointOf('POST', '/v1/payment_intents/pi_3Nabc123/capture')).toBe('POST /v1/payment_intents/{id}/capture');
    expect(endpointOf('GET', '/v1/payment_intents/pi_3Nabc123?expand[0]=latest_charge')).toBe('GET /v1/payment_intents/{id}');
    expect(endpointOf('GET', '/v1/payment_intents/search?query=metadata')).toBe('GET /v1/payment_intents/search');
    expect(endpointOf('POST', '/v1/refunds')).toBe('POST /v1/refunds');
    expect(endpointOf('POST', '/v1/payment_intents/pi_lowercase/cancel')).toBe('POST /v1/payment_intents/{id}/cancel');
  });
});
