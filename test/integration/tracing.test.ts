// Proves the worker's traces: a span per activity attempt with its IDs and key, Stripe and
// PostgreSQL spans beneath, the workflow and the starter in one trace, and no customer data.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { workflowSpanSinks } from '../../src/platform/temporal/order-worker.js';
import { TraceAttribute, type StoredSpan } from '../../src/platform/telemetry/tracing.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, stripeObjectsFor, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';
import { cardNumbersIn } from '../support/card-numbers.js';

/**
 * Traces from the worker process (issue 15), in the local trace store (TRACE_FILE): a span per
 * activity attempt carrying the order ID, the workflow and run IDs, the activity ID, the attempt
 * and the idempotency key; under it a span per Stripe request with the request's key and a span
 * per PostgreSQL query with its parametrized statement. A worker on the prebundled file traces the
 * workflow too, and a starter's order is one trace from the starter to the queries.
 */
let harness: SagaHarness;
let dir: string;

async function readSpans(...files: string[]): Promise<StoredSpan[]> {
  const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
  return texts
    .join('\n')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as StoredSpan);
}

const isPostgres = (span: StoredSpan) => span.attributes['db.system'] === 'postgresql';

/**
 * Nothing about the customer in any span: no payment method (pm_…), customer ID, email, card
 * number or amount, and no query parameter values (only statements with their placeholders).
 */
function expectNoCustomerData(spans: readonly StoredSpan[], order: { paymentMethod: string; customerId: string }): void {
  const text = JSON.stringify(spans);
  expect(text).not.toContain(order.paymentMethod);
  expect(text).not.toContain('pm_');
  expect(text).not.toContain(order.customerId);
  expect(text).not.toContain('"amount"');
  // Emails.
  expect(text).not.toMatch(/[\w.+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}/i);
  // Card numbers: 13 to 19 digits, perhaps grouped, that pass the Luhn check (every card number,
  // test cards included, does). Span and trace IDs are hex and may be all digits, so only the
  // attributes are searched, with UUIDs (run IDs, keys) taken out: their groups can be all digits.
  expect(cardNumbersIn(JSON.stringify(spans.map((span) => span.attributes)))).toEqual([]);
  expect(spans.filter((span) => Object.keys(span.attributes).some((name) => name.startsWith('db.postgresql.values')))).toEqual([]);
}

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

    const spans = await readSpans(traceFile);
    const ofOrder = spans.filter((span) => span.attributes[TraceAttribute.orderId] === order.orderId);
    expect(ofOrder.map((span) => span.name).sort()).toEqual(
      [
        'RunActivity:authorizePayment',
        'RunActivity:authorizePayment',
        'RunActivity:capturePayment',
        'RunActivity:confirmOrder',
        'RunActivity:recordOrderAndReserveStock',
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
    // The prebundled file carries the workflow interceptors: the whole run is one trace, each
    // activity attempt under the workflow span that started it.
    const traceIds = new Set(ofOrder.map((span) => span.traceId));
    expect(traceIds.size).toBe(1);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const runSpans = spans.filter((span) => traceIds.has(span.traceId) && span.name === 'RunWorkflow:orderPaymentSaga');
    expect(runSpans).toHaveLength(1);
    // The workflow's spans say which run they belong to, in valid attribute values: strings and
    // numbers, not the SDK's whole WorkflowInfo (search attributes, memo, build IDs as objects).
    const workflowSpans = spans.filter((span) => traceIds.has(span.traceId) && /^(RunWorkflow|StartActivity):/.test(span.name));
    expect(workflowSpans).toHaveLength(new Set(ofOrder.map((span) => span.name)).size + 1);
    for (const span of workflowSpans) {
      expect(span.attributes).toMatchObject({ workflowId: started.workflowId, runId: started.runId, originalExecutionRunId: started.runId, workflowType: 'orderPaymentSaga' });
      expect(Object.keys(span.attributes)).not.toEqual(expect.arrayContaining([expect.stringMatching(/searchAttributes|memo|BuildId/)]));
      expect(Object.values(span.attributes).filter((value) => typeof value === 'object')).toEqual([]);
    }
    for (const activity of ofOrder) {
      expect(byId.get(activity.parentSpanId ?? '')?.name).toBe(activity.name.replace('RunActivity:', 'StartActivity:'));
    }
    // Every attempt's PostgreSQL queries are its children, each with its statement as written:
    // placeholders, never the values.
    for (const activity of ofOrder) {
      const queries = spans.filter((span) => span.parentSpanId === activity.spanId && isPostgres(span) && span.name.startsWith('pg.query'));
      expect(queries.length, activity.name).toBeGreaterThan(0);
      for (const query of queries) expect(query.attributes['db.statement']).toEqual(expect.any(String));
    }
    const capture = ofOrder.find((span) => span.name === 'RunActivity:capturePayment');
    const captureStatements = spans.filter((span) => span.parentSpanId === capture?.spanId && isPostgres(span)).map((span) => String(span.attributes['db.statement']));
    expect(captureStatements.some((statement) => /insert into outbox/.test(statement) && statement.includes('$1'))).toBe(true);
    expectNoCustomerData(spans, order);

    const printed = await runCli('src/trace.ts', ['--order-id', order.orderId, '--file', traceFile], {});
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^order ${order.orderId}: \\d+ spans, 3 failed \\(`));
    expect(lines[1]).toMatch(/^RunWorkflow:orderPaymentSaga /);
    // RunWorkflow > StartActivity > RunActivity > Stripe and PostgreSQL.
    const at = (depth: number, prefix: string) => lines.filter((line) => line.startsWith(`${'  '.repeat(depth)}${prefix}`));
    expect(at(2, 'RunActivity:')).toHaveLength(5);
    expect(at(3, 'Stripe POST /v1/payment_intents  (')).toHaveLength(3);
    expect(at(3, 'Stripe POST /v1/payment_intents/{id}/capture')).toHaveLength(1);
    // One summary line per attempt for its queries; no query of its own without --sql.
    expect(at(3, 'PostgreSQL  (')).toHaveLength(5);
    expect(at(3, 'PostgreSQL  (')[0]).toMatch(/\d+ quer(y|ies)/);
    expect(lines.some((line) => line.trim().startsWith('pg.query'))).toBe(false);
    expect(at(2, 'RunActivity:authorizePayment').find((line) => line.includes('attempt 1'))).toContain('✗ FAILED');
    expect(at(2, 'RunActivity:authorizePayment').find((line) => line.includes('attempt 2'))).not.toContain('FAILED');

    const withSql = await runCli('src/trace.ts', ['--order-id', order.orderId, '--file', traceFile, '--sql'], {});
    expect(withSql.code, withSql.stderr).toBe(0);
    const sqlLines = withSql.stdout.trim().split('\n');
    expect(sqlLines.some((line) => line.startsWith('      pg.query:INSERT') && /insert into outbox .*\$2::text/.test(line))).toBe(true);
    expect(sqlLines.some((line) => line.trim().startsWith('PostgreSQL  ('))).toBe(false);

    const unknown = await runCli('src/trace.ts', ['--order-id', 'no-such-order', '--file', traceFile], {});
    expect(unknown.code).toBe(1);

    // Turning tracing off cannot break a run in flight: this tracing worker's history (its
    // activities' headers carry the trace context) replays on the untraced bundle, the one a
    // production worker loads with tracing off.
    const history = await started.handle.fetchHistory();
    expect(JSON.stringify(history)).toContain('_tracer-data');
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath: inject('untracedWorkflowBundlePath') }, sinks: workflowSpanSinks(null), dataConverter: harness.dataConverter }, history, started.workflowId)).resolves.toBeUndefined();
  });

  it('a worker bundling its workflows from source traces the workflow too: the whole run is one trace, each activity under the workflow span that started it', async () => {
    const traceFile = path.join(dir, 'traces-from-source.jsonl');
    const worker = await startWorkerProcess(harness, { env: { TRACE_FILE: traceFile, WORKFLOW_BUNDLE_PATH: '' } });
    const order = await harness.newOrder();
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');
    expect(await worker.stop()).toEqual({ code: 0, signal: null });

    const spans = await readSpans(traceFile);
    const activities = spans.filter((span) => span.attributes[TraceAttribute.orderId] === order.orderId);
    // Record-and-reserve, the hold, the capture, the confirmation: local or not, each under its StartActivity.
    expect(activities).toHaveLength(4);
    const traceIds = new Set(activities.map((span) => span.traceId));
    expect(traceIds.size).toBe(1);
    const trace = spans.filter((span) => traceIds.has(span.traceId));
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    expect(trace.filter((span) => span.name === 'RunWorkflow:orderPaymentSaga')).toHaveLength(1);
    for (const activity of activities) {
      const parent = activity.parentSpanId === null ? undefined : byId.get(activity.parentSpanId);
      expect(parent?.name).toBe(activity.name.replace('RunActivity:', 'StartActivity:'));
    }

    const printed = await runCli('src/trace.ts', ['--order-id', order.orderId, '--file', traceFile], {});
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^RunWorkflow:orderPaymentSaga /);
    expect(lines.some((line) => /^ {4}RunActivity:capturePayment /.test(line))).toBe(true);
  }, 240_000);
  it('an order from the starter is one trace: the starter span, its Update-with-Start, the workflow, each activity and its PostgreSQL queries', async () => {
    const workerTraces = path.join(dir, 'traces-starter-worker.jsonl');
    const starterTraces = path.join(dir, 'traces-starter.jsonl');
    const worker = await startWorkerProcess(harness, { env: { TRACE_FILE: workerTraces } });
    const order = await harness.newOrder();
    const started = await runCli(
      'src/starter.ts',
      [
        ...['--order-id', order.orderId, '--customer-id', order.customerId, '--amount', String(order.amount), '--currency', order.currency],
        ...['--payment-method', order.paymentMethod, '--sku', order.sku, '--quantity', String(order.quantity), '--wait', '--json'],
      ],
      { TEMPORAL_ADDRESS: harness.temporalAddress, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: harness.taskQueue, TRACE_FILE: starterTraces },
    );
    expect(started.code, started.stderr).toBe(0);
    expect((JSON.parse(started.stdout) as { result: { status: string } }).result.status).toBe('completed');
    expect(await worker.stop()).toEqual({ code: 0, signal: null });

    const spans = await readSpans(workerTraces, starterTraces);
    const root = spans.find((span) => span.name === 'start order' && span.attributes[TraceAttribute.orderId] === order.orderId);
    if (!root) throw new Error(`no 'start order' span of ${order.orderId}`);
    expect(root.service).toBe('order-payments-starter');
    expect(root.parentSpanId).toBeNull();
    const trace = spans.filter((span) => span.traceId === root.traceId);
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    const ancestry = (span: StoredSpan): string[] => {
      const parent = span.parentSpanId === null ? undefined : byId.get(span.parentSpanId);
      return parent ? [...ancestry(parent), parent.name] : [];
    };
    const record = trace.find((span) => span.name === 'RunActivity:recordOrderAndReserveStock');
    if (!record) throw new Error(`no recordOrderAndReserveStock span in the starter's trace: ${trace.map((span) => span.name).join(', ')}`);
    expect(ancestry(record)).toEqual(['start order', 'UpdateWithStartWorkflow:paymentOutcome', 'RunWorkflow:orderPaymentSaga', 'StartActivity:recordOrderAndReserveStock']);
    const queries = trace.filter((span) => span.parentSpanId === record.spanId && isPostgres(span));
    expect(queries.some((span) => /insert into orders/i.test(String(span.attributes['db.statement'])))).toBe(true);
    // Every activity of the order is in this one trace.
    expect(spans.filter((span) => span.attributes[TraceAttribute.orderId] === order.orderId && span.traceId !== root.traceId)).toEqual([]);
    expectNoCustomerData(spans, order);

    const printed = await runCli('src/trace.ts', ['--order-id', order.orderId, '--file', workerTraces], {});
    expect(printed.code, printed.stderr).toBe(0);
  }, 240_000);
});
