// Test support: a fresh, migrated PostgreSQL database for one test file, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../src/platform/db/migrate.js';
import { createPool } from '../../src/platform/db/pool.js';

/** The server every test database is created on. Default: the local trust-auth server. */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file; dropped afterwards. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `payments_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  const pool = createPool({ connectionString: url.toString(), max: 20, applicationName: 'order-payments-test' });
  if (options.migrated ?? true) await migrate(pool);
  return {
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      const cleanup = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}
