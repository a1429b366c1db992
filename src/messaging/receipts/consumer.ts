// The receipts service's JetStream consumer: pulls order events, applies each through its inbox
// and acks after the commit; malformed ones are terminated, database failures redelivered.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  PubHeaders,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { orderEventSchema } from '../order-event.js';
import { MessagingAttribute, OrderEventSpan, traceContextOfHeaders } from '../nats/trace-headers.js';
import type { ReceiptsMetrics } from '../../platform/telemetry/messaging-metrics.js';
import { TraceAttribute } from '../../platform/telemetry/tracing.js';
import { applyOrderEvent, type ApplyOutcome } from './receipts.js';

export interface ReceiptsConsumerConfig {
  stream: string;
  /** The durable consumer's name; every instance of the service shares it. Default receipts. */
  durable: string;
  subjectPrefix: string;
}

export interface ReceiptsConsumerDeps extends ReceiptsConsumerConfig {
  db: Pool;
  nc: NatsConnection;
  logger: Logger;
  /** How long a message the database could not take waits before redelivery. Default 2 s. */
  retryDelayMs?: number;
  /** Told each handled message's outcome; absent = not measured. */
  metrics?: Pick<ReceiptsMetrics, 'recordMessage'>;
}

/** What happened to one message: applied, dropped as seen before, refused as malformed, or left for redelivery. */
export type HandleOutcome = ApplyOutcome | 'rejected' | 'retry';

export interface ReceiptsConsumer {
  handle(msg: JsMsg): Promise<HandleOutcome>;
  /** Consumes until `signal` aborts, finishing the message in hand. */
  run(signal: AbortSignal): Promise<void>;
}

const CONSUMER_NOT_FOUND = 10014;
// Messages are terminated without a reason: servers before 2.10 ignore a `+TERM` that carries
// one, and the message would come back after every ack wait. The reason goes to the log instead.
// Unacked messages come back after this; a message's whole handling is one short transaction.
const ACK_WAIT_MS = 30_000;

/** Creates the durable pull consumer if it does not exist; an existing one is left as it is. */
export async function ensureReceiptsConsumer(nc: NatsConnection, config: ReceiptsConsumerConfig): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.consumers.info(config.stream, config.durable);
    return;
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === CONSUMER_NOT_FOUND)) throw error;
  }
  await jsm.consumers.add(config.stream, {
    durable_name: config.durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: `${config.subjectPrefix}.>`,
    ack_wait: nanos(ACK_WAIT_MS),
  });
}

/**
 * The receipts service: a durable JetStream consumer that applies each order event once through
 * its inbox, then acks. The ack comes after the commit, so a crash between them redelivers a
 * message whose inbox row already exists, and the redelivery is acked without effect.
 *
 * Each message is handled in a consumer span (`process order-events`), the child of the
 * publish span whose context the message's headers carry: the receipt's queries and log lines
 * are in the trace of the activity that wrote the event. A message without that context starts
 * a trace of its own.
 */
export function createReceiptsConsumer(deps: ReceiptsConsumerDeps): ReceiptsConsumer {
  const { logger } = deps;
  const retryDelayMs = deps.retryDelayMs ?? 2_000;
  const tracer = trace.getTracer('order-payments-receipts');

  function handle(msg: JsMsg): Promise<HandleOutcome> {
    const attributes = {
      [MessagingAttribute.system]: 'nats',
      [MessagingAttribute.operationType]: 'process',
      [MessagingAttribute.destination]: msg.subject,
      [MessagingAttribute.deliveryCount]: msg.info.deliveryCount,
    };
    const options = { kind: SpanKind.CONSUMER, attributes };
    return tracer.startActiveSpan(OrderEventSpan.process, options, traceContextOfHeaders(msg.headers), async (span) => {
      try {
        const outcome = await handleMessage(msg, span);
        span.setAttribute(MessagingAttribute.outcome, outcome);
        if (outcome === 'rejected' || outcome === 'retry') {
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome === 'retry' ? 'not applied; left for redelivery' : 'malformed; terminated' });
        }
        deps.metrics?.recordMessage(outcome, msg.subject.slice(deps.subjectPrefix.length + 1), msg.info.deliveryCount);
        return outcome;
      } finally {
        span.end();
      }
    });
  }

  async function handleMessage(msg: JsMsg, span: Span): Promise<HandleOutcome> {
    const messageId = msg.headers?.get(PubHeaders.MsgIdHdr) ?? '';
    if (messageId !== '') span.setAttribute(MessagingAttribute.messageId, messageId);
    const context = { subject: msg.subject, streamSeq: msg.seq, messageId, deliveryCount: msg.info.deliveryCount };
    if (messageId === '') {
      // Without an ID a republish cannot be told from a new event: refuse rather than guess.
      logger.error(context, 'order event without Nats-Msg-Id; terminated, not applied');
      msg.term();
      return 'rejected';
    }
    const parsed = orderEventSchema.safeParse(parseJson(msg));
    if (!parsed.success) {
      logger.error({ ...context, problems: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) }, 'malformed order event; terminated, not applied');
      msg.term();
      return 'rejected';
    }
    span.setAttribute(TraceAttribute.orderId, parsed.data.order_id);
    let outcome: ApplyOutcome;
    try {
      outcome = await applyOrderEvent(deps.db, messageId, parsed.data);
    } catch (error) {
      logger.warn({ ...context, err: error, retryInMs: retryDelayMs }, 'could not apply order event; it will be redelivered');
      msg.nak(retryDelayMs);
      return 'retry';
    }
    msg.ack();
    logger.info({ ...context, orderId: parsed.data.order_id, eventType: parsed.data.event_type, outcome }, 'order event handled');
    return outcome;
  }

  async function run(signal: AbortSignal): Promise<void> {
    const js = jetstream(deps.nc);
    const pause = (ms: number) => sleep(ms, undefined, { signal }).catch(() => undefined);
    while (!signal.aborted) {
      try {
        const consumer = await js.consumers.get(deps.stream, deps.durable);
        const messages = await consumer.consume({ max_messages: 100 });
        const stop = () => void messages.close();
        signal.addEventListener('abort', stop, { once: true });
        try {
          for await (const msg of messages) await handle(msg);
        } finally {
          signal.removeEventListener('abort', stop);
        }
      } catch (error) {
        logger.warn({ err: error, retryInMs: retryDelayMs }, 'receipts consumer interrupted; resuming');
      }
      await pause(retryDelayMs);
    }
  }

  return { handle, run };
}

function parseJson(msg: JsMsg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}
