// The ledger microbenchmark's wait for a quiet PostgreSQL server (bench/ledger-micro.ts): it
// measures at once when nothing else runs, and waits while another client's statement does.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForQuietServer } from '../../bench/ledger-micro.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrated: false });
});
afterAll(async () => {
  await db.drop();
});

describe('waitForQuietServer', () => {
  it('waits while another client runs a statement, and returns soon after it ends', async () => {
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      const busy = other.query('select pg_sleep(3)');
      // Until the sleep shows as active, the wait could not see it.
      const probe = new pg.Pool({ connectionString: db.url, max: 1 });
      try {
        for (let i = 0; i < 50; i++) {
          const { rows } = await probe.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(3)' and state = 'active'`);
          if ((rows[0]?.n ?? 0) > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // Other test files share the server: look at this database alone.
        const waited = await waitForQuietServer(probe, { timeoutMs: 20_000, thisDatabaseOnly: true });
        await busy;
        // The sleep had most of its 3 s left; the wait then needs three quiet polls (1 s).
        expect(waited).toBeGreaterThanOrEqual(2_000);
        expect(waited).toBeLessThan(20_000);
      } finally {
        await probe.end();
      }
    } finally {
      await other.end();
    }
  });
});
