// Row counts of the tables a soak watches for growth: the ones the retention reaper keeps bounded,
// and the API's idempotency keys (which the API process's own reaper keeps). One read, for the
// soak's sampler; it never writes.
import type { Queryable } from '../../platform/db/queryable.js';

export const SOAK_TABLES = ['activity_idempotency', 'outbox', 'processed_messages', 'api_idempotency'] as const;
export type SoakTable = (typeof SOAK_TABLES)[number];

/** The tables the retention reaper (src/operations/retention) deletes from, of those above. */
export const REAPED_SOAK_TABLES: readonly SoakTable[] = ['activity_idempotency', 'outbox', 'processed_messages'];

/** Exact row counts (count(*), not the planner's estimate), in one statement. */
export async function countSoakTables(db: Queryable): Promise<Record<SoakTable, number>> {
  const { rows } = await db.query<Record<SoakTable, number>>(
    `select (select count(*) from activity_idempotency)::int as activity_idempotency,
            (select count(*) from outbox)::int as outbox,
            (select count(*) from processed_messages)::int as processed_messages,
            (select count(*) from api_idempotency)::int as api_idempotency`,
  );
  const row = rows[0];
  if (!row) throw new Error('the table counts returned no row');
  return row;
}
