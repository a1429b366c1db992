// The outbox dispatcher's and the receipts consumer's Prometheus metrics: published, duplicate
// and failed rows, outbox lag, and each consumed message's outcome.
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

/**
 * Metrics of the outbox dispatcher and the receipts consumer (issue 15), each in a prom-client
 * registry of its own, served on the process's METRICS_PORT. Labels carry event types and
 * outcomes, never an order ID or a payload.
 */

export interface OutboxMetrics {
  registry: Registry;
  /** After a batch committed: rows the broker acked and were marked sent, of which duplicates, and a failed publish. */
  recordBatch(outcome: { sent: readonly number[]; duplicates: readonly number[]; failed: unknown }): void;
}

export function createOutboxMetrics(db: Pool, registry: Registry = new Registry(), options: { processMetrics?: boolean } = {}): OutboxMetrics {
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'order_payments_outbox_' });
  const published = new Counter({
    name: 'order_payments_outbox_published_total',
    help: 'Outbox rows the broker acknowledged and the dispatcher marked sent',
    registers: [registry],
  });
  const redelivered = new Counter({
    name: 'order_payments_outbox_redelivered_total',
    help: 'Rows published again after an earlier publish of them (JetStream answered duplicate: a crash between publish and commit)',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'order_payments_outbox_publish_failures_total',
    help: 'Publishes that failed (the broker down or slow); the row stays unsent and is retried',
    registers: [registry],
  });
  // Read at each scrape, from the table itself: the truth however many dispatchers run.
  // One query per scrape, shared by both gauges (prom-client collects them concurrently).
  let reading: Promise<{ rows: number; oldestAgeSeconds: number }> | null = null;
  const readOutbox = () => {
    reading ??= db
      .query<{ unsent: number; age: number | null }>(
        `select count(*)::int as unsent, extract(epoch from now() - min(created_at))::float8 as age from outbox where sent_at is null`,
      )
      .then(({ rows }) => ({ rows: rows[0]?.unsent ?? 0, oldestAgeSeconds: Math.max(0, rows[0]?.age ?? 0) }))
      .finally(() => {
        reading = null;
      });
    return reading;
  };
  new Gauge({
    name: 'order_payments_outbox_lag_seconds',
    help: 'Age of the oldest unsent outbox row (0 when everything is sent): how far behind the outbox is',
    registers: [registry],
    async collect() {
      this.set((await readOutbox()).oldestAgeSeconds);
    },
  });
  new Gauge({
    name: 'order_payments_outbox_unsent_rows',
    help: 'Outbox rows not yet acknowledged by the broker',
    registers: [registry],
    async collect() {
      this.set((await readOutbox()).rows);
    },
  });
  return {
    registry,
    recordBatch(outcome) {
      published.inc(outcome.sent.length);
      redelivered.inc(outcome.duplicates.length);
      if (outcome.failed) failures.inc();
    },
  };
}

export type ReceiptOutcome = 'applied' | 'duplicate' | 'rejected' | 'retry';

export interface ReceiptsMetrics {
  registry: Registry;
  /** One message handled: its outcome, its event type and JetStream's delivery count. */
  recordMessage(outcome: string, eventType: string, deliveryCount: number): void;
}

export function createReceiptsMetrics(registry: Registry = new Registry(), options: { processMetrics?: boolean } = {}): ReceiptsMetrics {
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'order_payments_receipts_' });
  const messages = new Counter({
    name: 'order_payments_receipts_messages_total',
    help: 'Order events handled, by outcome: applied, duplicate (already in the inbox: ignored), rejected (malformed), retry (left for redelivery)',
    labelNames: ['outcome', 'event_type'] as const,
    registers: [registry],
  });
  const redeliveries = new Counter({
    name: 'order_payments_receipts_redeliveries_total',
    help: 'Messages JetStream delivered more than once (delivery count above 1): an ack lost or a retry',
    registers: [registry],
  });
  return {
    registry,
    recordMessage(outcome, eventType, deliveryCount) {
      messages.inc({ outcome, event_type: eventType });
      if (deliveryCount > 1) redeliveries.inc();
    },
  };
}
