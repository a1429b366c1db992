import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

/** Span attributes this project adds (the SDK's interceptor adds workflowId, runId, activityId). */
export const TraceAttribute = {
  orderId: 'order_payments.order_id',
  idempotencyKey: 'order_payments.idempotency_key',
  attempt: 'temporal.activity.attempt',
} as const;

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
 * Registers the global tracer provider, so the SDK's interceptors and the Stripe client's spans
 * use it.
 */
export function startTracing(serviceName: string, env: Record<string, string | undefined> = process.env): Tracing | null {
  const otlp = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  const file = env.TRACE_FILE?.trim();
  if (!otlp && !file) return null;
  const exporter: SpanExporter = otlp ? new OTLPTraceExporter() : new JsonLinesSpanExporter(file as string);
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || serviceName });
  const spanProcessor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  return { resource, spanProcessor, shutdown: () => provider.shutdown() };
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
