import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('db:migrate', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
  });
  afterAll(() => db.drop());

  it('applies each migration exactly once when two workers start together', async () => {
    const other = createPool({ connectionString: db.url, max: 2 });
    try {
      const [first, second] = await Promise.all([migrate(db.pool), migrate(other)]);
      const applied = [...first.applied, ...second.applied].sort();
      expect(applied).toEqual(['001_orders_and_inventory.sql', '002_activity_idempotency.sql', '003_ledger.sql']);
      const { rows } = await db.pool.query<{ count: number }>('select count(*)::int as count from schema_migrations');
      expect(rows[0]?.count).toBe(3);
    } finally {
      await other.end();
    }
  });

  it('has nothing to do the second time', async () => {
    const again = await migrate(db.pool);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toHaveLength(3);
  });
});
