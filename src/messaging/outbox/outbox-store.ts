// The outbox table's dispatcher-side queries: claim unsent rows (skip locked), mark them sent,
// count a failed publish, and reap what was sent long ago.
import type { PoolClient } from 'pg';
import { deleteInBatches } from '../../platform/db/batches.js';
import type { Queryable } from '../../platform/db/queryable.js';
import type { OrderEventType } from '../order-event.js';

export interface OutboxRow {
  id: number;
  eventType: OrderEventType;
  orderId: string;
  payload: unknown;
  attempts: number;
  /** The W3C trace context of the span that wrote the row (a propagator's carrier), or null. */
  traceContext: Record<string, unknown> | null;
}

/**
 * Locks up to `limit` unsent rows, oldest first, for the caller's transaction. SKIP LOCKED
 * passes over rows another dispatcher holds, so dispatchers share the work instead of waiting
 * for each other or publishing the same row.
 */
export async function claimUnsent(client: PoolClient, limit: number): Promise<OutboxRow[]> {
  const { rows } = await client.query<{
    id: number;
    event_type: OrderEventType;
    order_id: string;
    payload: unknown;
    attempts: number;
    trace_context: Record<string, unknown> | null;
  }>(
    `select id, event_type, order_id, payload, attempts, trace_context
       from outbox
      where sent_at is null
      order by id
      limit $1
      for update skip locked`,
    [limit],
  );
  return rows.map((row) => ({
    id: row.id,
    eventType: row.event_type,
    orderId: row.order_id,
    payload: row.payload,
    attempts: row.attempts,
    traceContext: row.trace_context,
  }));
}

/** Marks rows the broker acknowledged. */
export async function markSent(client: PoolClient, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await client.query(
    `update outbox set sent_at = now(), attempts = attempts + 1, last_error = null
      where id = any($1::bigint[]) and sent_at is null`,
    [ids],
  );
}

/** Counts a failed publish against the row and keeps the reason; the row stays unsent. */
export async function recordFailure(client: PoolClient, id: number, error: string): Promise<void> {
  await client.query('update outbox set attempts = attempts + 1, last_error = $2 where id = $1', [id, error.slice(0, 2_000)]);
}

/**
 * Deletes rows the broker acknowledged more than `olderThanMs` ago, in batches of `batchSize`,
 * each its own statement. Unsent rows are never deleted. The row is also what the unique
 * (order_id, event_type, event_key) index refuses a second announcement with, so the horizon
 * covers every replay of the transaction that wrote it (src/operations/retention/settings.ts).
 */
export async function reapSentRows(db: Queryable, olderThanMs: number, batchSize: number): Promise<number> {
  return deleteInBatches(
    db,
    `delete from outbox where ctid in (
       select ctid from outbox
        where sent_at is not null and sent_at <= now() - make_interval(secs => $2::double precision / 1000)
        limit $1 for update skip locked)`,
    [olderThanMs],
    batchSize,
  );
}
