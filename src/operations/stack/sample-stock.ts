// Stocks the SKU that the stack's printed `npm run start` example orders, for the default tenant
// (the starter's when --tenant is not given).
import { DEFAULT_TENANT_ID } from '../../domain/order-input.js';
import type { Queryable } from '../../platform/db/queryable.js';

/** The SKU the printed `npm run start` example orders. */
export const SAMPLE_SKU = 'sku-widget';

/** Stocks the sample SKU of the default tenant once; a restart leaves whatever the operator's orders left. */
export async function seedSampleStock(db: Queryable): Promise<void> {
  await db.query('insert into inventory (tenant_id, sku, available) values ($1, $2, 1000) on conflict (tenant_id, sku) do nothing', [
    DEFAULT_TENANT_ID,
    SAMPLE_SKU,
  ]);
}
