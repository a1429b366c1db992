// Starts OpenTelemetry tracing for a process: OTLP export, or a local JSON-lines trace store, or
// none; plus PostgreSQL query spans and the project's span attribute names.
import { appendFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { SpanStatusCode, type Context } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { PgInstrumentation, type PgRequestHookInformation } from '@opentelemetry/instrumentation-pg';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** Span attributes this project adds (the SDK's interceptor adds workflowId, runId, activityId). */
export const TraceAttribute = {
  orderId: 'order_payments.order_id',
  idempotencyKey: 'order_payments.idempotency_key',
  attempt: 'temporal.activity.attempt',
} as const;

export interface TracingOptions {
  /**
   * A span per PostgreSQL query made inside another span (an activity attempt, a request, a
   * consumed message), with its parametrized SQL. Default true; the starter, which has no
   * database, turns it off.
   */
  postgres?: boolean;
}

export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Traces, from the standard OpenTelemetry variables: OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 * (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; else a local trace store, one JSON line per
 * span, when TRACE_FILE names a file (what `npm run trace` reads); else none, and null.
 * Registers the global tracer provider (and with it the W3C trace-context propagator), so the
 * SDK's interceptors, the Stripe client's spans, the outbox and NATS hand-offs and the pg
 * instrumentation use it.
 */
export function startTracing(
  serviceName: string,
  env: Record<string, string | undefined> = process.env,
  options: TracingOptions = {},
): Tracing | null {
  const otlp = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  const file = env.TRACE_FILE?.trim();
  if (!otlp && !file) return null;
  const exporter: SpanExporter = otlp ? new OTLPTraceExporter() : new JsonLinesSpanExporter(file as string);
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || serviceName });
  const spanProcessor = new WithoutTransactionControl(new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  const unregister = options.postgres === false ? () => undefined : instrumentPostgres(provider);
  return {
    resource,
    spanProcessor,
    shutdown: async () => {
      unregister();
      await provider.shutdown();
    },
  };
}

/**
 * PostgreSQL query spans, from @opentelemetry/instrumentation-pg. The instrumentation hooks
 * `require`; this project is ESM, and an `import pg from 'pg'` never passes through that hook,
 * so nothing would be patched. pg is a CommonJS package, though, and an ESM import of it gets the
 * very module object `require('pg')` returns: requiring it once through the hook, after the
 * instrumentation is enabled, lets the instrumentation wrap `Client.prototype.query` and
 * `connect` in place, and every importer's clients (the pools created before this, too) are
 * traced. The order of imports does not matter.
 *
 * Only queries made inside a span are traced (requireParentSpan): an activity attempt's, a
 * request's, a consumed message's. Polls and scrapes (the dispatcher's claim, the metrics
 * gauges, the reapers) would each start a trace of their own. The span carries the statement
 * as written, with its `$1` placeholders; the parameter values (enhancedDatabaseReporting) and
 * the results are never recorded, so no order's customer data reaches a span.
 */
function instrumentPostgres(provider: NodeTracerProvider): () => void {
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, requestHook: nameForCommand })],
  });
  createRequire(import.meta.url)('pg');
  return unregister;
}

/**
 * Names a prepared statement's span for its command, as an unprepared one is named
 * (`pg.query:INSERT orders`, not `pg.query:op_3f1c… orders`): the pool runs every statement with
 * parameters as a named prepared statement (src/platform/db/prepared-statements.ts), and the
 * instrumentation would name the span for that name, which tells a reader nothing. The name stays
 * on the span as `db.postgresql.plan`.
 */
export function nameForCommand(span: { updateName(name: string): unknown }, info: PgRequestHookInformation): void {
  if (info.query.name === undefined) return;
  const command = (info.query.text.trim().split(/\s+/, 1)[0] ?? '').replace(/;$/, '').toUpperCase();
  const database = info.connection.database;
  span.updateName(`pg.query:${command}${database ? ` ${database}` : ''}`);
}

/**
 * Passes every ended span on except a transaction's BEGIN and COMMIT: every multi-statement write
 * runs in a transaction (src/platform/db/transaction.ts), so they were two of every five query
 * spans, each saying only that the statements between them ran in one, which their parent span
 * already shows. A ROLLBACK is kept: it is the one that says something went wrong. (Dropped at
 * the processor, not by a sampler, so the standard OTEL_TRACES_SAMPLER variables keep working.)
 */
export class WithoutTransactionControl implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (!isTransactionControl(span)) this.next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** A query span of a bare BEGIN or COMMIT (the pg instrumentation names a span `pg.query:<COMMAND> <database>`). */
export function isTransactionControl(span: Pick<ReadableSpan, 'name'>): boolean {
  return /^pg\.query:(BEGIN|COMMIT)( |$)/.test(span.name);
}

/** One span as the local trace store keeps it. */
export interface StoredSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  service: string;
  startMs: number;
  durationMs: number;
  status: { code: 'unset' | 'ok' | 'error'; message: string | null };
  attributes: Record<string, unknown>;
}

/** Appends each span to a file as a JSON line: a trace store that needs no server. */
export class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly file: string) {
    mkdirSync(path.dirname(file), { recursive: true });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    try {
      const lines = spans.map((span) => JSON.stringify(storedSpanOf(span))).join('\n');
      if (lines) appendFileSync(this.file, `${lines}\n`);
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function storedSpanOf(span: ReadableSpan): StoredSpan {
  const context = span.spanContext();
  const code = span.status.code === SpanStatusCode.ERROR ? 'error' : span.status.code === SpanStatusCode.OK ? 'ok' : 'unset';
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanId ?? null,
    name: span.name,
    service: String(span.resource.attributes['service.name'] ?? ''),
    startMs: hrTimeToMilliseconds(span.startTime),
    durationMs: hrTimeToMilliseconds(span.duration),
    status: { code, message: span.status.message ?? null },
    attributes: { ...span.attributes },
  };
}
