// Stocks the SKU that the stack's printed `npm run start` example orders.
import type { Queryable } from '../../platform/db/queryable.js';

/** The SKU the printed `npm run start` example orders. */
export const SAMPLE_SKU = 'sku-widget';

/** Stocks the sample SKU once; a restart leaves whatever the operator's orders left. */
export async function seedSampleStock(db: Queryable): Promise<void> {
  await db.query('insert into inventory (sku, available) values ($1, 1000) on conflict (sku) do nothing', [SAMPLE_SKU]);
}
