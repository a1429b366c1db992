import { TraceAttribute, type StoredSpan } from './tracing.js';

/**
 * The spans of one order from the local trace store: those carrying its ID, every span of their
 * traces (the workflow's, when the worker traces it), and everything under them.
 */
export function spansOfOrder(spans: readonly StoredSpan[], orderId: string): StoredSpan[] {
  const traces = new Set(spans.filter((span) => span.attributes[TraceAttribute.orderId] === orderId).map((span) => span.traceId));
  const selected = new Map(spans.filter((span) => traces.has(span.traceId)).map((span) => [span.spanId, span]));
  let grew = true;
  while (grew) {
    grew = false;
    for (const span of spans) {
      if (!selected.has(span.spanId) && span.parentSpanId !== null && selected.has(span.parentSpanId)) {
        selected.set(span.spanId, span);
        grew = true;
      }
    }
  }
  return [...selected.values()];
}

/**
 * An indented tree, children under their parent in start order, each line with its offset from
 * the first span, its duration, the attempt and the key where the span has them, and failures
 * marked `✗ FAILED`.
 */
export function renderTraceTree(spans: readonly StoredSpan[]): string[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string | null, StoredSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanId !== null && ids.has(span.parentSpanId) ? span.parentSpanId : null;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  for (const list of children.values()) list.sort((a, b) => a.startMs - b.startMs);
  const origin = Math.min(...spans.map((span) => span.startMs));
  const lines: string[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const span of children.get(parent) ?? []) {
      const details = [`+${(span.startMs - origin).toFixed(0)} ms`, `${span.durationMs.toFixed(1)} ms`];
      const attempt = span.attributes[TraceAttribute.attempt];
      if (typeof attempt === 'number') details.push(`attempt ${attempt}`);
      const key = span.attributes[TraceAttribute.idempotencyKey];
      if (typeof key === 'string') details.push(`key ${key}`);
      if (span.attributes['stripe.idempotent_replayed'] === true) details.push('replayed by Stripe');
      const failed = span.status.code === 'error' ? `  ✗ FAILED${span.status.message ? `: ${span.status.message}` : ''}` : '';
      lines.push(`${'  '.repeat(depth)}${span.name}  (${details.join(', ')})${failed}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return lines;
}
