// Proves the span processor that leaves a transaction's BEGIN and COMMIT out of the traces: the
// other query spans, a ROLLBACK among them, still reach the exporter.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { WithoutTransactionControl, isTransactionControl } from '../../src/platform/telemetry/tracing.js';

describe('transaction control spans', () => {
  it('BEGIN and COMMIT are not exported; ROLLBACK, the statements and other spans are', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new WithoutTransactionControl(new SimpleSpanProcessor(exporter))] });
    const tracer = provider.getTracer('test');
    const names = [
      'pg.query:BEGIN payments',
      'pg.query:INSERT payments',
      'pg.query:COMMIT payments',
      'pg.query:BEGIN',
      'pg.query:ROLLBACK payments',
      'pg.query:COMMITTED_READS payments',
      'RunActivity:capturePayment',
    ];
    for (const name of names) tracer.startSpan(name).end();
    await provider.forceFlush();
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual([
      'pg.query:INSERT payments',
      'pg.query:ROLLBACK payments',
      'pg.query:COMMITTED_READS payments',
      'RunActivity:capturePayment',
    ]);
    expect(isTransactionControl({ name: 'pg.query:COMMIT' })).toBe(true);
    await provider.shutdown();
  });
});
