// Writes the active trace context into the carrier an outbox row stores, and reads a stored
// carrier back as the context the published message's span continues.
import { context, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api';

/**
 * The trace context as the propagator writes it down (W3C: `traceparent`, and `tracestate` when
 * set): what an outbox row stores, so the message it becomes continues the trace of the activity
 * that wrote it. Uses the global propagator, which the tracer provider sets (startTracing); with
 * tracing off it writes nothing.
 */
export type TraceCarrier = Record<string, string>;

/** The active span's context as a carrier, or null when there is none to carry (no span, or tracing off). */
export function activeTraceCarrier(active: Context = context.active()): TraceCarrier | null {
  const carrier: TraceCarrier = {};
  propagation.inject(active, carrier);
  return Object.keys(carrier).length === 0 ? null : carrier;
}

/**
 * The context a stored carrier names, to start a child span in; the root context when there is
 * no carrier or it holds anything but strings (a row written before the column existed, or by
 * hand), so a span started in it begins a trace of its own.
 */
export function contextFromCarrier(carrier: unknown): Context {
  if (typeof carrier !== 'object' || carrier === null) return ROOT_CONTEXT;
  const strings = Object.fromEntries(Object.entries(carrier).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  return propagation.extract(ROOT_CONTEXT, strings);
}
