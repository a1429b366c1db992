// The outbox dispatcher's loop: claims unsent rows in order, publishes each to JetStream with its
// row ID as the message ID, and marks it sent in the same transaction once the broker acks.
import { setTimeout as sleep } from 'node:timers/promises';
import type { JetStreamClient, PubAck } from '@nats-io/jetstream';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { withTransaction } from '../../platform/db/transaction.js';
import { failpoint } from '../../platform/failpoint.js';
import { subjectFor } from '../order-event.js';
import { headersWithTraceContext, MessagingAttribute, OrderEventSpan } from '../nats/trace-headers.js';
import type { OutboxMetrics } from '../../platform/telemetry/messaging-metrics.js';
import { TraceAttribute } from '../../platform/telemetry/tracing.js';
import { contextFromCarrier } from '../../platform/telemetry/trace-propagation.js';
import { claimUnsent, markSent, recordFailure, type OutboxRow } from './outbox-store.js';

export interface OutboxDispatcherDeps {
  db: Pool;
  js: JetStreamClient;
  /** Rows are published on `<subjectPrefix>.<event_type>`. */
  subjectPrefix: string;
  logger: Logger;
  /** Rows claimed (and locked) per transaction. Default 100. */
  batchSize?: number;
  /** How long to wait for the broker's ack of one publish. Default 5 s. */
  publishTimeoutMs?: number;
  /** Pause when the outbox is drained. Default 500 ms. */
  idleDelayMs?: number;
  /** Pause after a failure, doubling each time up to the maximum. Default 500 ms to 15 s. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Runs after the broker acked a row and before the row is marked sent. A test seam: throwing
   * here is a crash at the worst moment, the row published and not recorded as such.
   */
  afterPublish?: (row: OutboxRow, ack: PubAck) => void | Promise<void>;
  /** Told each committed batch (published, redelivered, failed); absent = not measured. */
  metrics?: Pick<OutboxMetrics, 'recordBatch'>;
}

export interface BatchOutcome {
  /** Rows this transaction locked. */
  claimed: number;
  /** IDs the broker acked (stored now or before) and that were marked sent. */
  sent: number[];
  /** Of those, the ones the broker reported as duplicates of a publish it already stored. */
  duplicates: number[];
  /** The row whose publish failed; it and the rows after it stay unsent for the next try. */
  failed: { id: number; error: string } | null;
}

export interface OutboxDispatcher {
  /** Claims one batch, publishes it in ID order and marks what the broker acked; one transaction. */
  dispatchBatch(): Promise<BatchOutcome>;
  /** Dispatches until `signal` aborts, finishing the batch in hand; backs off while anything fails. */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * Publishes the outbox to JetStream at least once.
 *
 * The row locks are held while publishing: that is what keeps a second dispatcher off these
 * rows (SKIP LOCKED). A row is marked sent only after the broker's ack, in the same transaction
 * that locked it, so a crash after the publish and before the commit leaves the row unsent and
 * it is published again. The row ID travels as `Nats-Msg-Id`: inside the stream's duplicate
 * window JetStream drops the second copy; past it, consumers drop it through their inbox.
 *
 * Each publish is a producer span (`publish order-events`) in the trace of the span that wrote
 * the row (its stored context), and the message's headers carry the publish span's context, so
 * the consumer continues the same trace. With tracing off the spans are no-ops and the headers
 * carry nothing.
 */
export function createOutboxDispatcher(deps: OutboxDispatcherDeps): OutboxDispatcher {
  const batchSize = deps.batchSize ?? 100;
  const publishTimeoutMs = deps.publishTimeoutMs ?? 5_000;
  const idleDelayMs = deps.idleDelayMs ?? 500;
  const backoff = deps.backoff ?? { initialMs: 500, maxMs: 15_000 };
  const { logger } = deps;
  const tracer = trace.getTracer('order-payments-outbox');

  function publish(row: OutboxRow): Promise<PubAck> {
    const subject = subjectFor(deps.subjectPrefix, row.eventType);
    const attributes = {
      [MessagingAttribute.system]: 'nats',
      [MessagingAttribute.operationType]: 'publish',
      [MessagingAttribute.destination]: subject,
      [MessagingAttribute.messageId]: String(row.id),
      [TraceAttribute.orderId]: row.orderId,
    };
    const options = { kind: SpanKind.PRODUCER, attributes };
    return tracer.startActiveSpan(OrderEventSpan.publish, options, contextFromCarrier(row.traceContext), async (span) => {
      try {
        const ack = await deps.js.publish(subject, JSON.stringify(row.payload), {
          msgID: String(row.id),
          timeout: publishTimeoutMs,
          headers: headersWithTraceContext(context.active()),
        });
        if (ack.duplicate) span.setAttribute(MessagingAttribute.duplicate, true);
        return ack;
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  async function dispatchBatch(): Promise<BatchOutcome> {
    const outcome = await withTransaction(deps.db, async (client): Promise<BatchOutcome> => {
      const rows = await claimUnsent(client, batchSize);
      const sent: number[] = [];
      const duplicates: number[] = [];
      let failed: BatchOutcome['failed'] = null;
      for (const row of rows) {
        let ack: PubAck;
        try {
          ack = await publish(row);
        } catch (error) {
          // The broker is down or slow: stop here rather than fail every row behind this one.
          failed = { id: row.id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
          break;
        }
        failpoint('outbox.after-publish');
        await deps.afterPublish?.(row, ack);
        sent.push(row.id);
        if (ack.duplicate) duplicates.push(row.id);
      }
      await markSent(client, sent);
      if (failed) await recordFailure(client, failed.id, failed.error);
      return { claimed: rows.length, sent, duplicates, failed };
    });
    deps.metrics?.recordBatch(outcome);
    return outcome;
  }

  async function run(signal: AbortSignal): Promise<void> {
    let delayMs = backoff.initialMs;
    const pause = (ms: number) => sleep(ms, undefined, { signal }).catch(() => undefined);
    while (!signal.aborted) {
      let outcome: BatchOutcome;
      try {
        outcome = await dispatchBatch();
      } catch (error) {
        logger.error({ err: error, retryInMs: delayMs }, 'outbox batch failed; nothing was marked sent');
        await pause(delayMs);
        delayMs = Math.min(delayMs * 2, backoff.maxMs);
        continue;
      }
      if (outcome.sent.length > 0) {
        logger.info({ sent: outcome.sent.length, duplicates: outcome.duplicates.length }, 'outbox rows published');
      }
      if (outcome.failed) {
        logger.warn({ outboxId: outcome.failed.id, error: outcome.failed.error, retryInMs: delayMs }, 'publish failed; row kept for retry');
        await pause(delayMs);
        delayMs = Math.min(delayMs * 2, backoff.maxMs);
        continue;
      }
      delayMs = backoff.initialMs;
      if (outcome.claimed < batchSize) await pause(idleDelayMs);
    }
  }

  return { dispatchBatch, run };
}
