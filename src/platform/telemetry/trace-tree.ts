// Selects one order's spans from the local trace store and renders them as an indented tree with
// timings, attempts, keys and failures, for `npm run trace`.
import { MessagingAttribute } from '../../messaging/nats/trace-headers.js';
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

export interface TraceTreeOptions {
  /** One line per PostgreSQL query, with its statement, instead of one summary line per parent. */
  sql?: boolean;
}

/** A span of @opentelemetry/instrumentation-pg: a query (`pg.query:…`) or a connection (`pg.connect`). */
export function isPostgresSpan(span: StoredSpan): boolean {
  return span.attributes['db.system'] === 'postgresql';
}

/**
 * An indented tree, children under their parent in start order, each line with its offset from
 * the first span, its duration, the attempt and the key where the span has them, and failures
 * marked `✗ FAILED`. A span's PostgreSQL spans are summed up in one line where the first of them
 * started (`PostgreSQL  (+212 ms, 7 queries, 1 connect, 4.3 ms)`): an activity makes a dozen, and
 * a line each would bury the Stripe calls and the retries. `sql` prints them one a line instead,
 * each with its statement (placeholders, never values).
 */
export function renderTraceTree(spans: readonly StoredSpan[], options: TraceTreeOptions = {}): string[] {
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string | null, StoredSpan[]>();
  for (const span of spans) {
    const parent = span.parentSpanId !== null && ids.has(span.parentSpanId) ? span.parentSpanId : null;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  for (const list of children.values()) list.sort((a, b) => a.startMs - b.startMs);
  const origin = Math.min(...spans.map((span) => span.startMs));
  const offset = (span: StoredSpan) => `+${(span.startMs - origin).toFixed(0)} ms`;
  const failure = (span: StoredSpan) => (span.status.code === 'error' ? `  ✗ FAILED${span.status.message ? `: ${span.status.message}` : ''}` : '');
  const lines: string[] = [];
  const walk = (parent: string | null, depth: number) => {
    const indent = '  '.repeat(depth);
    const mine = children.get(parent) ?? [];
    const postgres = mine.filter(isPostgresSpan);
    for (const span of mine) {
      if (isPostgresSpan(span) && !options.sql) {
        if (span === postgres[0]) lines.push(`${indent}${postgresSummary(postgres, offset(span))}`);
        continue;
      }
      if (isPostgresSpan(span)) {
        const statement = typeof span.attributes['db.statement'] === 'string' ? `  ${oneLine(span.attributes['db.statement'])}` : '';
        // `pg.query:INSERT payments`: the database's name is the same on every line.
        const database = span.attributes['db.name'];
        const name = typeof database === 'string' && span.name.endsWith(` ${database}`) ? span.name.slice(0, -database.length - 1) : span.name;
        lines.push(`${indent}${name}  (${offset(span)}, ${span.durationMs.toFixed(1)} ms)${failure(span)}${statement}`);
        continue;
      }
      const details = [offset(span), `${span.durationMs.toFixed(1)} ms`];
      const attempt = span.attributes[TraceAttribute.attempt];
      if (typeof attempt === 'number') details.push(`attempt ${attempt}`);
      const key = span.attributes[TraceAttribute.idempotencyKey];
      if (typeof key === 'string') details.push(`key ${key}`);
      if (span.attributes['stripe.idempotent_replayed'] === true) details.push('replayed by Stripe');
      const subject = span.attributes[MessagingAttribute.destination];
      if (typeof subject === 'string') details.push(subject);
      if (span.attributes[MessagingAttribute.duplicate] === true) details.push('duplicate, dropped by JetStream');
      const outcome = span.attributes[MessagingAttribute.outcome];
      if (typeof outcome === 'string') details.push(outcome);
      lines.push(`${indent}${span.name}  (${details.join(', ')})${failure(span)}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return lines;
}

function postgresSummary(spans: readonly StoredSpan[], offset: string): string {
  const queries = spans.filter((span) => span.name.startsWith('pg.query')).length;
  const connects = spans.length - queries;
  const details = [offset, `${queries} ${queries === 1 ? 'query' : 'queries'}`];
  if (connects > 0) details.push(`${connects} ${connects === 1 ? 'connect' : 'connects'}`);
  details.push(`${spans.reduce((total, span) => total + span.durationMs, 0).toFixed(1)} ms`);
  const failed = spans.filter((span) => span.status.code === 'error');
  const first = failed[0];
  const failure = first ? `  ✗ ${failed.length} FAILED${first.status.message ? `: ${first.status.message}` : ''}` : '';
  return `PostgreSQL  (${details.join(', ')})${failure}`;
}

function oneLine(statement: string): string {
  const flat = statement.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}
