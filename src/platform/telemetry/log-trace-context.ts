// The pino mixin that stamps each log line with the active span's trace_id and span_id.
import { isSpanContextValid, trace } from '@opentelemetry/api';

/**
 * Log lines that say which trace they belong to: a pino mixin adding `trace_id` and `span_id`
 * of the span active when the line is written (a request's, a consumed message's, an activity
 * attempt's), and nothing outside a span or with tracing off. The same names the SDK's activity
 * interceptor gives activity log lines, so one query finds a trace's lines in every process.
 * Fields the line sets itself win (pino's merge), so an activity line never carries two.
 */
export function traceContextMixin(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
