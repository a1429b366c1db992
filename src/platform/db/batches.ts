// Bounded batched deletes for the retention sweeps: one short statement per batch until a batch
// comes back short.
import type { Queryable } from './queryable.js';

/**
 * Runs one bounded delete again and again until a batch comes back short, and returns how many
 * rows it deleted in all. Each batch is its own statement, so its own short transaction: row
 * locks are held for one batch, never for the whole sweep. `statement` must delete at most `$1`
 * rows (its first parameter is the batch size), e.g.
 * `delete from t where ctid in (select ctid from t where ... limit $1 for update skip locked)`;
 * SKIP LOCKED passes over rows a live transaction holds, which the next sweep finds.
 */
export async function deleteInBatches(
  db: Queryable,
  statement: string,
  params: readonly unknown[],
  batchSize: number,
): Promise<number> {
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batch size must be a positive whole number, not ${batchSize}`);
  let deleted = 0;
  for (;;) {
    const { rowCount } = await db.query(statement, [batchSize, ...params]);
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batchSize) return deleted;
  }
}
