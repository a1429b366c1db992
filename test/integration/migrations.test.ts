// Proves db:migrate applies each migration exactly once when two migrators start together, and
// has nothing to do the second time.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../src/platform/db/migrate.js';
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
});
