// One trace across the outbox and NATS (issue 15): the capture attempt that writes an order's
// `order.paid` row stores its trace context in the row; the dispatcher publishes it in a producer
// span that is the attempt's child, with the span's context in the message's headers; the
// receipts consumer handles it in a child of that span, its queries under it. The worker, the
// dispatcher and the receipts consumer are processes of their own, as operators run them, each
// writing its local trace store; real Temporal, PostgreSQL, NATS and the Stripe emulator.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessagingAttribute, OrderEventSpan } from '../../src/messaging/nats/trace-headers.js';
import { TraceAttribute, type StoredSpan } from '../../src/platform/telemetry/tracing.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';
import { createTestStream, eventually, TEST_NATS_URL, type TestStream } from '../support/nats.js';
import { startServiceProcess, stopServiceProcesses } from '../support/service-process.js';
import { cardNumbersIn } from '../support/card-numbers.js';

let harness: SagaHarness;
let stream: TestStream;
let dir: string;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  stream = await createTestStream();
  dir = await mkdtemp(path.join(os.tmpdir(), 'outbox-traces-'));
});
afterAll(async () => {
  await stopWorkerProcesses();
  await stopServiceProcesses();
  await stream.close();
  await harness.close();
  await rm(dir, { recursive: true, force: true });
});

async function readSpans(file: string): Promise<StoredSpan[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as StoredSpan);
}

describe('trace context across the outbox and NATS', () => {
  it("an order.paid event is published and applied in the trace of the capture attempt that wrote it: capture > publish > process > the receipt's queries", async () => {
    const files = { worker: path.join(dir, 'worker.jsonl'), outbox: path.join(dir, 'outbox.jsonl'), receipts: path.join(dir, 'receipts.jsonl') };
    const messagingEnv = {
      DATABASE_URL: harness.db.url,
      NATS_URL: TEST_NATS_URL,
      OUTBOX_STREAM: stream.stream,
      OUTBOX_SUBJECT_PREFIX: stream.subjectPrefix,
      OUTBOX_POLL_INTERVAL_MS: '50',
    };
    const worker = await startWorkerProcess(harness, { env: { TRACE_FILE: files.worker } });
    const dispatcher = startServiceProcess('src/outbox-dispatcher.ts', { ...messagingEnv, DATABASE_URL: harness.db.serviceUrl('outbox'), TRACE_FILE: files.outbox });
    const receipts = startServiceProcess('src/receipts.ts', { ...messagingEnv, DATABASE_URL: harness.db.serviceUrl('receipts'), TRACE_FILE: files.receipts });

    const order = await harness.newOrder();
    const started = await harness.start(order);
    expect((await started.handle.result()).status).toBe('completed');
    await eventually(
      'the receipt of order.paid',
      async () => {
        const { rows } = await harness.db.pool.query('select 1 from receipts where order_id = $1 and event_type = $2', [order.orderId, 'order.paid']);
        return rows.length === 1 ? true : undefined;
      },
      60_000,
    );
    // Graceful stops flush what each process still buffers.
    expect(await worker.stop()).toEqual({ code: 0, signal: null });
    expect(await dispatcher.stop()).toEqual({ code: 0, signal: null });
    expect(await receipts.stop()).toEqual({ code: 0, signal: null });

    const [workerSpans, outboxSpans, receiptsSpans] = await Promise.all([readSpans(files.worker), readSpans(files.outbox), readSpans(files.receipts)]);
    const capture = workerSpans.find((span) => span.name === 'RunActivity:capturePayment' && span.attributes[TraceAttribute.orderId] === order.orderId);
    if (!capture) throw new Error('no capture attempt span');

    // The row keeps the capture attempt's context.
    const { rows } = await harness.db.pool.query<{ trace_context: Record<string, string> | null }>(
      `select trace_context from outbox where order_id = $1 and event_type = 'order.paid'`,
      [order.orderId],
    );
    expect(rows[0]?.trace_context).toEqual({ traceparent: `00-${capture.traceId}-${capture.spanId}-01` });

    const publish = outboxSpans.find((span) => span.name === OrderEventSpan.publish && span.attributes[TraceAttribute.orderId] === order.orderId);
    expect(publish).toMatchObject({
      traceId: capture.traceId,
      parentSpanId: capture.spanId,
      service: 'order-payments-outbox',
      attributes: { [MessagingAttribute.system]: 'nats', [MessagingAttribute.destination]: `${stream.subjectPrefix}.order.paid` },
    });
    const processed = receiptsSpans.find((span) => span.name === OrderEventSpan.process && span.attributes[TraceAttribute.orderId] === order.orderId);
    expect(processed).toMatchObject({
      traceId: capture.traceId,
      parentSpanId: publish?.spanId,
      service: 'order-payments-receipts',
      attributes: { [MessagingAttribute.outcome]: 'applied', [MessagingAttribute.messageId]: publish?.attributes[MessagingAttribute.messageId] },
    });
    const receiptQueries = receiptsSpans.filter((span) => span.parentSpanId === processed?.spanId && span.attributes['db.system'] === 'postgresql');
    expect(receiptQueries.map((span) => String(span.attributes['db.statement']).trim())).toEqual(
      expect.arrayContaining([expect.stringMatching(/^insert into processed_messages/), expect.stringMatching(/^insert into receipts/)]),
    );

    // The receipts consumer's log line for the event is in the same trace, naming its span.
    const handledLine = receipts
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === 'order event handled' && line.orderId === order.orderId);
    expect(handledLine).toMatchObject({ trace_id: capture.traceId, span_id: processed?.spanId });

    // Nothing about the customer crossed with the context.
    const all = [...workerSpans, ...outboxSpans, ...receiptsSpans];
    const text = JSON.stringify(all);
    expect(text).not.toContain('pm_');
    expect(text).not.toContain(order.customerId);
    // Card numbers (run IDs are UUID v7s, whose groups can run to 13 digits: cardNumbersIn skips them).
    expect(cardNumbersIn(JSON.stringify(all.map((span) => span.attributes)))).toEqual([]);

    // npm run trace, over the three stores together, shows the hand-off under the capture.
    const joined = path.join(dir, 'all.jsonl');
    await writeFile(joined, (await Promise.all(Object.values(files).map((file) => readFile(file, 'utf8')))).join(''));
    const printed = await runCli('src/trace.ts', ['--order-id', order.orderId, '--file', joined], {});
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.split('\n');
    const captureLine = lines.findIndex((line) => line.startsWith('    RunActivity:capturePayment '));
    expect(captureLine).toBeGreaterThan(0);
    const publishLine = lines.findIndex((line, index) => index > captureLine && line.startsWith(`      ${OrderEventSpan.publish}  (`));
    expect(publishLine).toBeGreaterThan(captureLine);
    expect(lines[publishLine + 1]).toMatch(new RegExp(`^ {8}${OrderEventSpan.process}  \\(.*, applied\\)$`));
    // The inbox claim and the receipt (the transaction's BEGIN and COMMIT are not exported).
    expect(lines[publishLine + 2]).toMatch(/^ {10}PostgreSQL {2}\(.*2 queries/);
  }, 240_000);
});
