// Proves db:migrate applies each migration exactly once when two migrators start together, and
// has nothing to do the second time.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR, UnknownMigrationError } from '../../src/platform/db/migrate.js';
import { createPool } from '../../src/platform/db/pool.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

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
});
