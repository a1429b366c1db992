import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceAttribute, type StoredSpan } from '../../src/telemetry/tracing.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';

/**
 * Traces from the worker process (issue 15), in the local trace store (TRACE_FILE): a span per
 * activity attempt carrying the order ID, the workflow and run IDs, the activity ID, the attempt
 * and the idempotency key; under it a span per Stripe request with the request's key.
 */
let harness: SagaHarness;
let dir: string;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  dir = await mkdtemp(path.join(os.tmpdir(), 'traces-'));
});
afterAll(async () => {
  await stopWorkerProcesses();
  await harness.close();
  await rm(dir, { recursive: true, force: true });
});

describe('worker traces', () => {
  it('an order whose authorization response was lost: a span per activity attempt, the failed one marked, the Stripe spans carry the key; npm run trace prints the tree', async () => {
    const traceFile = path.join(dir, 'traces.jsonl');
    const worker = await startWorkerProcess(harness, { env: { TRACE_FILE: traceFile } });
    const order = await harness.newOrder();
    harness.emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: order.orderId, count: 2 });
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');
    expect((await stripeObjectsFor(harness.stripe, order.orderId)).succeeded).toHaveLength(1);
    // A graceful stop flushes the spans still buffered.
    expect(await worker.stop()).toEqual({ code: 0, signal: null });

    const spans = (await readFile(traceFile, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as StoredSpan);
    const ofOrder = spans.filter((span) => span.attributes[TraceAttribute.orderId] === order.orderId);
    expect(ofOrder.map((span) => span.name).sort()).toEqual(
      [
        'RunActivity:authorizePayment',
        'RunActivity:authorizePayment',
        'RunActivity:capturePayment',
        'RunActivity:confirmOrder',
        'RunActivity:recordOrder',
        'RunActivity:reserveStock',
      ].sort(),
    );
    const authorizations = ofOrder.filter((span) => span.name === 'RunActivity:authorizePayment').sort((a, b) => a.startMs - b.startMs);
    const key = `${started.runId}/authorize-payment`;
    expect(authorizations.map((span) => [span.attributes[TraceAttribute.attempt], span.status.code, span.attributes[TraceAttribute.idempotencyKey]])).toEqual([
      [1, 'error', key],
      [2, 'ok', key],
    ]);
    for (const span of ofOrder) {
      expect(span.attributes).toMatchObject({ temporalWorkflowId: started.workflowId, run_id: started.runId });
      expect(span.attributes.temporalActivityId).toEqual(expect.any(String));
    }
    // Each attempt's Stripe requests are its children and carry the activity's key. stripe-node
    // re-sends a dropped request once by itself, so the first attempt lost two answers; the
    // second attempt's was Stripe's replay.
    const stripeSpans = authorizations.map((attempt) =>
      spans.filter((span) => span.parentSpanId === attempt.spanId && span.name.startsWith('Stripe ')).sort((a, b) => a.startMs - b.startMs),
    );
    expect(stripeSpans.map((children) => children.map((span) => [span.name, span.attributes[TraceAttribute.idempotencyKey], span.status.code]))).toEqual([
      [
        ['Stripe POST /v1/payment_intents', key, 'error'],
        ['Stripe POST /v1/payment_intents', key, 'error'],
      ],
      [['Stripe POST /v1/payment_intents', key, 'unset']],
    ]);
    expect(stripeSpans[1]?.[0]?.attributes['stripe.idempotent_replayed']).toBe(true);
    // Nothing about the customer: no payment method, customer ID or amount in any span.
    const text = JSON.stringify(spans);
    expect(text).not.toContain(order.paymentMethod);
    expect(text).not.toContain(order.customerId);
    expect(text).not.toMatch(/"amount"|@/);

    const printed = await runCli('src/telemetry/trace-cli.ts', ['--order-id', order.orderId, '--file', traceFile], {});
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^order ${order.orderId}: \\d+ spans, 3 failed \\(`));
    expect(lines.filter((line) => line.startsWith('RunActivity:'))).toHaveLength(6);
    expect(lines.filter((line) => line.startsWith('  Stripe POST /v1/payment_intents  ('))).toHaveLength(3);
    expect(lines.filter((line) => line.startsWith('  Stripe POST /v1/payment_intents/{id}/capture'))).toHaveLength(1);
    expect(lines.find((line) => line.startsWith('RunActivity:authorizePayment') && line.includes('attempt 1'))).toContain('✗ FAILED');
    expect(lines.find((line) => line.startsWith('RunActivity:authorizePayment') && line.includes('attempt 2'))).not.toContain('FAILED');

    const unknown = await runCli('src/telemetry/trace-cli.ts', ['--order-id', 'no-such-order', '--file', traceFile], {});
    expect(unknown.code).toBe(1);
  });

  it('a worker bundling its workflows from source traces the workflow too: the whole run is one trace, each activity under the workflow span that started it', async () => {
    const traceFile = path.join(dir, 'traces-from-source.jsonl');
    const worker = await startWorkerProcess(harness, { env: { TRACE_FILE: traceFile, WORKFLOW_BUNDLE_PATH: '' } });
    const order = await harness.newOrder();
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');
    expect(await worker.stop()).toEqual({ code: 0, signal: null });

    const spans = (await readFile(traceFile, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as StoredSpan);
    const activities = spans.filter((span) => span.attributes[TraceAttribute.orderId] === order.orderId);
    expect(activities).toHaveLength(5);
    const traceIds = new Set(activities.map((span) => span.traceId));
    expect(traceIds.size).toBe(1);
    const trace = spans.filter((span) => traceIds.has(span.traceId));
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    expect(trace.filter((span) => span.name === 'RunWorkflow:orderPaymentSaga')).toHaveLength(1);
    for (const activity of activities) {
      const parent = activity.parentSpanId === null ? undefined : byId.get(activity.parentSpanId);
      expect(parent?.name).toBe(activity.name.replace('RunActivity:', 'StartActivity:'));
    }

    const printed = await runCli('src/telemetry/trace-cli.ts', ['--order-id', order.orderId, '--file', traceFile], {});
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^RunWorkflow:orderPaymentSaga /);
    expect(lines.some((line) => /^ {4}RunActivity:capturePayment /.test(line))).toBe(true);
  }, 240_000);
});
