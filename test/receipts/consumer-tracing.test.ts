// The receipts consumer's traces (issue 15): each message is handled in a consumer span, the child
// of the context its NATS headers carry, with the receipt's PostgreSQL queries under it and the
// handling's log lines carrying its trace_id and span_id. Real NATS, PostgreSQL and the project's
// own startTracing (local trace store, pg instrumentation), in this test's process.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderEvent } from '../../src/messaging/order-event.js';
import { headersWithTraceContext, MessagingAttribute, OrderEventSpan } from '../../src/messaging/nats/trace-headers.js';
import { createReceiptsConsumer, ensureReceiptsConsumer } from '../../src/messaging/receipts/consumer.js';
import { traceContextMixin } from '../../src/platform/telemetry/log-trace-context.js';
import { startTracing, TraceAttribute, type StoredSpan, type Tracing } from '../../src/platform/telemetry/tracing.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestStream, eventually, type TestStream } from '../support/nats.js';

let db: TestDatabase;
let stream: TestStream;
let dir: string;
let traceFile: string;
let tracing: Tracing;

beforeAll(async () => {
  db = await createTestDatabase();
  stream = await createTestStream();
  dir = await mkdtemp(path.join(os.tmpdir(), 'receipts-traces-'));
  traceFile = path.join(dir, 'traces.jsonl');
  const started = startTracing('order-payments-receipts', { TRACE_FILE: traceFile });
  if (!started) throw new Error('startTracing returned null with TRACE_FILE set');
  tracing = started;
});
afterAll(async () => {
  await tracing.shutdown();
  await stream.close();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

const event = (orderId: string): OrderEvent => ({
  event_type: 'order.paid',
  order_id: orderId,
  status: 'paid',
  amount_minor: 4321,
  currency: 'usd',
  payment_intent_id: 'pi_secret_looking_value',
  refund_id: null,
  reason: null,
  occurred_at: new Date().toISOString(),
});

describe('receipts consumer traces', () => {
  it('a message carrying a trace context is handled in a child span with its queries under it and its log lines in the trace; one without starts a trace of its own', async () => {
    // The span that published the message, as the dispatcher's would be.
    const publisher = trace.getTracer('test').startSpan('test publish', {}, ROOT_CONTEXT);
    const publisherContext = publisher.spanContext();
    const subject = `${stream.subjectPrefix}.order.paid`;
    await stream.js.publish(subject, JSON.stringify(event('O-traced')), {
      msgID: '71',
      headers: headersWithTraceContext(trace.setSpan(ROOT_CONTEXT, publisher)),
    });
    publisher.end();
    await stream.js.publish(subject, JSON.stringify(event('O-untraced')), { msgID: '72' });

    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ level: 'info', mixin: traceContextMixin }, sink);
    const config = { stream: stream.stream, durable: 'receipts', subjectPrefix: stream.subjectPrefix };
    await ensureReceiptsConsumer(stream.nc, config);
    const stop = new AbortController();
    const running = createReceiptsConsumer({ ...config, db: db.pool, nc: stream.nc, logger }).run(stop.signal);
    try {
      await eventually('both messages acked', async () => {
        const info = await stream.jsm.consumers.info(stream.stream, 'receipts');
        return info.ack_floor.stream_seq === 2 && info.num_ack_pending === 0 ? info : undefined;
      });
    } finally {
      stop.abort();
      await running;
    }
    await tracing.spanProcessor.forceFlush();

    const spans = (await readFile(traceFile, 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as StoredSpan);
    const handled = spans.filter((span) => span.name === OrderEventSpan.process);
    const traced = handled.find((span) => span.attributes[MessagingAttribute.messageId] === '71');
    const untraced = handled.find((span) => span.attributes[MessagingAttribute.messageId] === '72');
    if (!traced || !untraced) throw new Error(`missing consumer spans: ${JSON.stringify(handled)}`);

    expect(traced).toMatchObject({
      traceId: publisherContext.traceId,
      parentSpanId: publisherContext.spanId,
      service: 'order-payments-receipts',
      status: { code: 'unset' },
      attributes: {
        [MessagingAttribute.system]: 'nats',
        [MessagingAttribute.destination]: subject,
        [MessagingAttribute.outcome]: 'applied',
        [TraceAttribute.orderId]: 'O-traced',
      },
    });
    expect(untraced.parentSpanId).toBeNull();
    expect(untraced.traceId).not.toBe(publisherContext.traceId);

    // The inbox claim and the receipt under the consumer span; the transaction's BEGIN and COMMIT
    // around them are not exported.
    const queries = spans.filter((span) => span.parentSpanId === traced.spanId && span.attributes['db.system'] === 'postgresql');
    const statements = queries.map((span) => String(span.attributes['db.statement']).replace(/\s+/g, ' ').trim());
    expect(statements).toEqual([expect.stringMatching(/^insert into processed_messages .*\$1/), expect.stringMatching(/^insert into receipts .*\$1/)]);
    // Prepared statements, each span named for its command, not for the statement's name.
    expect(queries.map((span) => span.name)).toEqual([expect.stringMatching(/^pg\.query:INSERT /), expect.stringMatching(/^pg\.query:INSERT /)]);
    expect(queries.every((span) => /^op_[0-9a-f]+$/.test(String(span.attributes['db.postgresql.plan'])))).toBe(true);
    // The statements, never the values: not the payment intent, the amount or the message ID.
    const attributes = JSON.stringify(queries.map((span) => span.attributes));
    expect(attributes).not.toContain('pi_secret_looking_value');
    expect(attributes).not.toContain('4321');

    // The handling's log line names its span; a line outside any span names none.
    const handledLine = lines.find((line) => line.msg === 'order event handled' && line.orderId === 'O-traced');
    expect(handledLine).toMatchObject({ trace_id: publisherContext.traceId, span_id: traced.spanId });
    const untracedLine = lines.find((line) => line.msg === 'order event handled' && line.orderId === 'O-untraced');
    expect(untracedLine).toMatchObject({ trace_id: untraced.traceId, span_id: untraced.spanId });
    logger.info('outside any span');
    await new Promise((resolve) => setImmediate(resolve));
    const outside = lines.find((line) => line.msg === 'outside any span');
    expect(outside).toBeDefined();
    expect(outside).not.toHaveProperty('trace_id');
  });
});
