// Carries the trace context in NATS message headers from the dispatcher's publish to the
// consumer's handling, and names those spans and their attributes.
import { propagation, ROOT_CONTEXT, type Context, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/**
 * The trace context in NATS message headers (issue 15): the dispatcher writes its publish
 * span's context into the message's headers (`traceparent`, `tracestate`), the consumer reads it
 * back, so the span that handles a message is a child of the one that published it. The global
 * propagator (W3C trace context, set by the tracer provider) does the writing and the reading;
 * these only say how to reach NATS headers.
 */
const setter: TextMapSetter<MsgHdrs> = {
  set(carrier, key, value) {
    carrier.set(key, value);
  },
};

const getter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => carrier?.keys() ?? [],
  get(carrier, key) {
    // MsgHdrs answers '' for a header it does not have.
    const value = carrier?.get(key);
    return value ? value : undefined;
  },
};

/** Headers carrying `active`'s trace context; empty ones when there is nothing to carry. */
export function headersWithTraceContext(active: Context): MsgHdrs {
  const carrier = natsHeaders();
  propagation.inject(active, carrier, setter);
  return carrier;
}

/** The trace context a message's headers carry; the root context when they carry none. */
export function traceContextOfHeaders(headers: MsgHdrs | undefined): Context {
  return propagation.extract(ROOT_CONTEXT, headers, getter);
}

/** The spans of an order event's hand-off, in the trace of the activity that wrote it. */
export const OrderEventSpan = {
  /** The dispatcher's publish of one outbox row (a producer span, child of the row's stored context). */
  publish: 'publish order-events',
  /** The consumer's handling of one message (a consumer span, child of the publish). */
  process: 'process order-events',
} as const;

/** Attributes of those spans (OpenTelemetry's messaging conventions, and the outcome). */
export const MessagingAttribute = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  deliveryCount: 'messaging.nats.delivery_count',
  /** The publish: JetStream answered that it already had this message ID (a republish it dropped). */
  duplicate: 'order_payments.outbox.duplicate',
  /** The handling: applied, duplicate, rejected or retry. */
  outcome: 'order_payments.receipt.outcome',
} as const;
