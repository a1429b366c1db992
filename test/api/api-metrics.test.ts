// The API's Prometheus metrics, on their own listener: idempotency outcomes, requests, and the
// webhook endpoint's signature failures, duplicates and hand-offs.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { startServiceProcess, stopServiceProcesses } from '../support/service-process.js';
import { apiMetricsRegistry } from '../../src/platform/telemetry/api-metrics.js';
import { startMetricsServer, type MetricsServer } from '../../src/platform/telemetry/metrics-server.js';
import { sampleSum, scrape } from '../support/prometheus-text.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { deliver, deliverSigned, sign, startApi, stripeEvent, type RunningApi } from '../support/webhooks.js';
import { startOrdersApi, type OrdersApi } from '../support/api.js';

/**
 * The API's metrics (issue 15), on a listener of their own (main.ts starts it on
 * API_METRICS_PORT), after real requests through the orders API and the webhook endpoint.
 */
let harness: SagaHarness;
let api: OrdersApi;
let webhooks: RunningApi;
let failingHandoffs: RunningApi;
let metricsServer: MetricsServer;

beforeAll(async () => {
  harness = await startSagaHarness();
  api = await startOrdersApi(harness);
  webhooks = await startApi({ db: harness.db.pool, client: harness.client, handoff: { attempts: 2, retryMs: 10 } });
  failingHandoffs = await startApi({
    db: harness.db.pool,
    signal: () => Promise.reject(new Error('Temporal unreachable')),
    handoff: { attempts: 2, retryMs: 10 },
  });
  metricsServer = await startMetricsServer(apiMetricsRegistry, { port: 0 });
});
afterAll(async () => {
  await stopServiceProcesses();
  await metricsServer.close();
  await failingHandoffs.close();
  await webhooks.close();
  await api.app.close();
  await harness.close();
});

const metrics = () => scrape(metricsServer.url);
const idempotency = (text: string, outcome: string) => sampleSum(text, 'order_payments_api_idempotency_total', { operation: 'order.create', outcome });
const requests = (text: string, labels: Record<string, string>) => sampleSum(text, 'order_payments_api_http_requests_total', labels);

describe('API metrics, served apart from the public port', () => {
  it('counts idempotency outcomes (first, replay, reused) and requests by route and status', async () => {
    const before = await metrics();
    const apiKey = await api.keyFor('tenant-metrics');
    const body = await api.orderBody();
    const first = await api.post({ apiKey, idempotencyKey: 'metrics-key-1', body });
    expect(first.status).toBe(201);
    const replay = await api.post({ apiKey, idempotencyKey: 'metrics-key-1', body });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const reused = await api.post({ apiKey, idempotencyKey: 'metrics-key-1', body: { ...body, amount: (body.amount as number) + 1 } });
    expect(reused.status).toBe(422);

    const after = await metrics();
    expect(idempotency(after, 'first') - idempotency(before, 'first')).toBe(1);
    expect(idempotency(after, 'replay') - idempotency(before, 'replay')).toBe(1);
    expect(idempotency(after, 'reused') - idempotency(before, 'reused')).toBe(1);
    expect(idempotency(after, 'in_progress') - idempotency(before, 'in_progress')).toBe(0);
    const created = { method: 'POST', route: '/v1/orders', status_code: '201' };
    expect(requests(after, created) - requests(before, created)).toBe(2);
    const refused = { method: 'POST', route: '/v1/orders', status_code: '422' };
    expect(requests(after, refused) - requests(before, refused)).toBe(1);
    expect(sampleSum(after, 'order_payments_api_http_request_duration_seconds_count', created)).toBeGreaterThanOrEqual(2);
    // Labels name routes and outcomes, never a tenant, a key or an order.
    expect(after).not.toContain('tenant-metrics');
    expect(after).not.toContain('metrics-key-1');
    expect(after).not.toContain(String(first.body.id));
    expect(after).not.toMatch(/pm_card|cust-api/);
  });

  it('the public app has no /metrics route', async () => {
    const response = await api.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(404);
    expect(response.body).not.toContain('order_payments_api_http_requests_total');
  });

  it('counts webhook signature failures, inbox duplicates and hand-offs, by outcome', async () => {
    const before = await metrics();
    const object = { id: 'pi_metrics_1', object: 'payment_intent', status: 'succeeded', amount: 2500, currency: 'usd', metadata: { order_id: 'order-metrics-1' } };
    const event = stripeEvent('payment_intent.succeeded', object);
    const payload = JSON.stringify(event);
    expect((await deliver(webhooks.webhookUrl, payload, sign(payload, { secret: 'whsec_someone_else' }))).status).toBe(400);
    expect((await deliverSigned(webhooks.webhookUrl, event)).status).toBe(200);
    expect((await deliverSigned(webhooks.webhookUrl, event)).body).toMatchObject({ duplicate: true });
    const other = stripeEvent('payment_intent.succeeded', { ...object, id: 'pi_metrics_2', metadata: { order_id: 'order-metrics-2' } });
    expect((await deliverSigned(failingHandoffs.webhookUrl, other)).status).toBe(200);

    await vi.waitFor(async () => {
      const after = await metrics();
      const delta = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
      expect(delta('order_payments_api_webhook_signature_failures_total')).toBe(1);
      expect(delta('order_payments_api_webhook_events_total', { result: 'recorded' })).toBe(2);
      expect(delta('order_payments_api_webhook_events_total', { result: 'duplicate' })).toBe(1);
      // No workflow runs for order-metrics-1; the other API cannot reach Temporal at all.
      expect(delta('order_payments_api_webhook_handoffs_total', { outcome: 'no_workflow' })).toBe(1);
      expect(delta('order_payments_api_webhook_handoffs_total', { outcome: 'failed' })).toBe(1);
      expect(delta('order_payments_api_webhook_handoffs_total', { outcome: 'signalled' })).toBe(0);
    }, { timeout: 10_000, interval: 100 });
  });

  it('npm run api serves /metrics on API_METRICS_PORT and not on API_PORT', async () => {
    const [apiPort, metricsPort] = [await findFreePort(), await findFreePort()];
    const service = startServiceProcess('src/api.ts', {
      DATABASE_URL: harness.db.serviceUrl('api'),
      STRIPE_WEBHOOK_SECRET: 'whsec_api_metrics_suite',
      TEMPORAL_ADDRESS: harness.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      API_PORT: String(apiPort),
      API_METRICS_PORT: String(metricsPort),
      API_RATE_LIMIT_PER_MINUTE: '0',
    });
    const publicUrl = `http://127.0.0.1:${apiPort}`;
    await vi.waitFor(async () => {
      expect((await fetch(`${publicUrl}/healthz`)).status).toBe(200);
    }, { timeout: 60_000, interval: 200 });
    expect((await fetch(`${publicUrl}/metrics`)).status).toBe(404);
    const text = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(sampleSum(text, 'order_payments_api_http_requests_total', { method: 'GET', route: '/healthz', status_code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sampleSum(text, 'order_payments_api_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(text).toContain('order_payments_api_process_cpu_seconds_total');
    const exit = await service.stop();
    expect(exit, service.output()).toEqual({ code: 0, signal: null });
  }, 90_000);
});
