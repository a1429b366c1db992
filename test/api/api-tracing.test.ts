// Proves an API order is one trace across the api and worker processes: the request, the
// Update-with-Start, the workflow run and its activities.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKey } from '../../src/api/auth/api-keys.js';
import { setStock } from '../../src/orders/stock.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { TraceAttribute, type StoredSpan } from '../../src/platform/telemetry/tracing.js';
import { startServiceProcess, stopServiceProcesses } from '../support/service-process.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';

/**
 * One trace follows an API order (issue 15): the API's request span, the workflow's
 * Update-with-Start from the Temporal client, the workflow run and each activity attempt, from
 * the api and worker processes into one local trace store.
 */
let harness: SagaHarness;
let dir: string;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  dir = await mkdtemp(path.join(os.tmpdir(), 'api-traces-'));
});
afterAll(async () => {
  await stopServiceProcesses();
  await stopWorkerProcesses();
  await harness.close();
  await rm(dir, { recursive: true, force: true });
});

describe('API traces', () => {
  it('POST /v1/orders, the workflow and its activities are one trace', async () => {
    const traceFile = path.join(dir, 'traces.jsonl');
    const worker = await startWorkerProcess(harness, { env: { TRACE_FILE: traceFile, WORKFLOW_BUNDLE_PATH: '' } });
    const apiPort = await findFreePort();
    const api = startServiceProcess('src/api.ts', {
      DATABASE_URL: harness.db.serviceUrl('api'),
      STRIPE_WEBHOOK_SECRET: 'whsec_api_tracing_suite',
      TEMPORAL_ADDRESS: harness.temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: harness.taskQueue,
      API_PORT: String(apiPort),
      API_METRICS_PORT: '0',
      API_RATE_LIMIT_PER_MINUTE: '0',
      TRACE_FILE: traceFile,
    });
    const url = `http://127.0.0.1:${apiPort}`;
    await vi.waitFor(async () => {
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    }, { timeout: 60_000, interval: 200 });

    const { key } = await createApiKey(harness.db.pool, 'tenant-traces');
    const sku = 'sku-api-traces';
    await setStock(harness.db.pool, sku, 10, 'tenant-traces');
    const response = await fetch(`${url}/v1/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'idempotency-key': 'trace-me-1' },
      body: JSON.stringify({ customerId: 'cust-traces', amount: 1500, currency: 'usd', paymentMethod: 'pm_card_visa', sku, quantity: 1 }),
    });
    expect(response.status).toBe(201);
    const order = (await response.json()) as { id: string; workflowId: string };
    const result = (await harness.client.workflow.getHandle(order.workflowId).result()) as { status: string };
    expect(result.status).toBe('completed');
    expect(await api.stop()).toEqual({ code: 0, signal: null });
    expect(await worker.stop()).toEqual({ code: 0, signal: null });

    const spans = (await readFile(traceFile, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as StoredSpan);
    const request = spans.find((span) => span.name === 'POST /v1/orders');
    expect(request).toMatchObject({ service: 'order-payments-api', parentSpanId: null, attributes: { 'http.response.status_code': 201 } });
    const trace = spans.filter((span) => span.traceId === request?.traceId);
    const names = trace.map((span) => span.name);
    expect(names).toContain('UpdateWithStartWorkflow:paymentOutcome');
    expect(names).toContain('HandleUpdate:paymentOutcome');
    expect(names).toContain('RunWorkflow:orderPaymentSaga');
    const activities = trace.filter((span) => span.attributes[TraceAttribute.orderId] === order.id).map((span) => span.name);
    expect(activities.sort()).toEqual(
      ['RunActivity:recordOrderAndReserveStock', 'RunActivity:authorizePayment', 'RunActivity:capturePayment', 'RunActivity:confirmOrder'].sort(),
    );
    expect(new Set(trace.map((span) => span.service))).toEqual(new Set(['order-payments-api', 'order-payments-worker']));
    // The update is named by the request's Idempotency-Key (tenant/operation/key): that is the
    // key a span may carry. Nothing about the customer, and never the API key itself.
    expect(trace.find((span) => span.name === 'UpdateWithStartWorkflow:paymentOutcome')?.attributes.temporalUpdateId).toBe('tenant-traces/order.create/trace-me-1');
    const text = JSON.stringify(spans);
    for (const secret of ['cust-traces', 'pm_card_visa', key, '"amount"', '"paymentMethod"', '"customerId"']) expect(text).not.toContain(secret);
  }, 240_000);
});
