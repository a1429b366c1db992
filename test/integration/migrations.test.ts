// Proves db:migrate applies each migration exactly once when two migrators start together, and
// has nothing to do the second time.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR, UnknownMigrationError } from '../../src/platform/db/migrate.js';
import { createPool } from '../../src/platform/db/pool.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** The last migration of issue 34's expand step: code from before it and after it may run side by side. */
const EXPAND_STEP = '018_inbox_keeps_fields.sql';

describe('db:migrate', () => {
  let db: TestDatabase;
  let files: string[];
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
    files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
  });
  afterAll(() => db.drop());

  it('applies each migration exactly once when two workers start together', async () => {
    const other = createPool({ connectionString: db.url, max: 2 });
    try {
      const [first, second] = await Promise.all([migrate(db.pool), migrate(other)]);
      expect([...first.applied, ...second.applied].sort()).toEqual(files);
      const { rows } = await db.pool.query<{ name: string }>('select name from schema_migrations order by name');
      expect(rows.map((row) => row.name)).toEqual(files);
    } finally {
      await other.end();
    }
  });

  it('has nothing to do the second time', async () => {
    const again = await migrate(db.pool);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(files);
  });

  it('--through applies the expand step alone: 014 adds the outbox event key beside the old index, 015 then drops the old one', async () => {
    const staged = await createTestDatabase({ migrated: false });
    const indexes = async () => {
      const { rows } = await staged.pool.query<{ indexname: string; indexdef: string }>(
        `select indexname, indexdef from pg_indexes where tablename = 'outbox' and indexname like 'outbox_one_event_%' order by indexname`,
      );
      return Object.fromEntries(rows.map((row) => [row.indexname, row.indexdef.replace(/^.* USING btree /, '')]));
    };
    try {
      await expect(migrate(staged.pool, MIGRATIONS_DIR, { through: '014_no_such_file.sql' })).rejects.toBeInstanceOf(UnknownMigrationError);
      const expand = await migrate(staged.pool, MIGRATIONS_DIR, { through: '014_outbox_event_key.sql' });
      expect(expand.applied).toEqual(files.filter((name) => name <= '014_outbox_event_key.sql'));
      expect(await indexes()).toEqual({
        outbox_one_event_per_kind: '(order_id, event_type)',
        outbox_one_event_per_key: '(order_id, event_type, event_key)',
      });

      const contract = await migrate(staged.pool);
      expect(contract.applied).toEqual(files.filter((name) => name > '014_outbox_event_key.sql'));
      expect(await indexes()).toEqual({ outbox_one_event_per_key: '(order_id, event_type, event_key)' });
      const { rows: checks } = await staged.pool.query<{ conname: string; convalidated: boolean }>(
        `select conname, convalidated from pg_constraint where conname in ('outbox_event_type_check', 'receipts_event_type_check') order by conname`,
      );
      expect(checks).toEqual([
        { conname: 'outbox_event_type_check', convalidated: true },
        { conname: 'receipts_event_type_check', convalidated: true },
      ]);
    } finally {
      await staged.drop();
    }
  });

  it('016-018 then 019: old rows get their tenants and lose their webhook payloads, old statements work beside new ones until the contract, and then two tenants may share a SKU', async () => {
    const staged = await createTestDatabase({ migrated: false });
    const q = (sql: string, params: unknown[] = []) => staged.pool.query(sql, params);
    const tenantsOf = async (table: string, key: string) =>
      Object.fromEntries((await q(`select ${key} as key, tenant_id from ${table} order by 1`)).rows.map((row: { key: string; tenant_id: string }) => [row.key, row.tenant_id]));
    // What code from before issue 34 writes: no tenant anywhere, stock found by SKU alone.
    const oldOrder = (orderId: string) =>
      q(`insert into orders (order_id, customer_id, amount_minor, currency, sku, quantity, request_hash, workflow_id) values ($1, 'c', 100, 'usd', 'sku-old', 1, 'h', 'w')`, [orderId]);
    const oldStock = (sku: string, available: number) =>
      q('insert into inventory (sku, available) values ($1, $2) on conflict (sku) do update set available = excluded.available', [sku, available]);
    const oldWebhook = (eventId: string) =>
      q(
        `insert into stripe_webhook_events (event_id, event_type, object_id, event_created, payload, applied) values ($1, 'charge.succeeded', 'ch_1', 1, $2, false)`,
        [eventId, { id: eventId, data: { object: { object: 'charge', status: 'succeeded', amount: 2500, currency: 'usd', billing_details: { name: 'Ada' } } } }],
      );
    const oldReserve = (key: string, orderId: string) =>
      q(`insert into stock_allocations (idempotency_key, order_id, sku, quantity, request_hash) values ($1, $2, 'sku-old', 1, 'h')`, [key, orderId]);
    try {
      await migrate(staged.pool, MIGRATIONS_DIR, { through: '015_outbox_drop_one_event_per_kind.sql' });
      await oldStock('sku-old', 10);
      await q(`insert into api_orders (order_id, tenant_id, request) values ('api-1', 'acme', '{}')`);
      await oldOrder('api-1');
      await oldOrder('cli-1');
      await oldReserve('k-api-1', 'api-1');
      await oldWebhook('evt_old_1');

      await migrate(staged.pool, MIGRATIONS_DIR, { through: EXPAND_STEP });
      // The event's fields are kept, its payload (the customer's address among it) is gone.
      expect((await q(`select object_type, object_status, amount, currency, payload from stripe_webhook_events`)).rows).toEqual([
        { object_type: 'charge', object_status: 'succeeded', amount: 2500, currency: 'usd', payload: null },
      ]);
      await oldWebhook('evt_old_2');
      // The shared stock and what was reserved from it are the default tenant's; API orders keep their tenant.
      expect(await tenantsOf('orders', 'order_id')).toEqual({ 'api-1': 'acme', 'cli-1': 'default' });
      expect(await tenantsOf('inventory', 'sku')).toEqual({ 'sku-old': 'default' });
      expect(await tenantsOf('stock_allocations', 'idempotency_key')).toEqual({ 'k-api-1': 'default' });

      // Old code still runs, and its rows get the tenants new code would give them.
      await q(`insert into api_orders (order_id, tenant_id, request) values ('api-2', 'acme', '{}')`);
      await oldOrder('api-2');
      await oldOrder('cli-2');
      await oldStock('sku-old', 12);
      // The operator gives the SKU to its tenant: its open reservations move with it.
      await q(`update inventory set tenant_id = 'acme' where sku = 'sku-old'`);
      await oldReserve('k-api-2', 'api-2');
      expect(await tenantsOf('orders', 'order_id')).toMatchObject({ 'api-2': 'acme', 'cli-2': 'default' });
      expect(await tenantsOf('stock_allocations', 'idempotency_key')).toEqual({ 'k-api-1': 'acme', 'k-api-2': 'acme' });

      await migrate(staged.pool);
      await q(`insert into inventory (tenant_id, sku, available) values ('globex', 'sku-old', 4)`);
      expect((await q(`select tenant_id, available from inventory where sku = 'sku-old' order by tenant_id`)).rows).toEqual([
        { tenant_id: 'acme', available: 12 },
        { tenant_id: 'globex', available: 4 },
      ]);
      // After the contract a statement that names no tenant fails instead of landing in 'default'.
      await expect(oldOrder('cli-3')).rejects.toThrow(/null value in column "tenant_id"/);
      await expect(oldStock('sku-new', 1)).rejects.toThrow(/no unique or exclusion constraint/);
      await expect(oldWebhook('evt_old_3')).rejects.toThrow(/column "payload" of relation "stripe_webhook_events" does not exist/);
    } finally {
      await staged.drop();
    }
  });
});

