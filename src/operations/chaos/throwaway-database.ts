// A fresh, migrated PostgreSQL database named for one benchmark or chaos run, dropped afterwards,
// so runs never touch anyone's data.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../../platform/db/migrate.js';
import { createPool } from '../../platform/db/pool.js';
import { redact } from '../../platform/tools/postgres.js';

/** The local trust-auth server, used when DATABASE_URL does not name one. */
export const LOCAL_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ThrowawayDatabase {
  name: string;
  url: string;
  /** A small pool for the run's own reads (checks, statistics). */
  pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database on DATABASE_URL's server (or the local one), named for the run,
 * so a benchmark or chaos run never touches anyone's data and always starts from empty tables.
 */
export async function createThrowawayDatabase(options: { label: string; serverUrl?: string | undefined }): Promise<ThrowawayDatabase> {
  const admin = new URL(options.serverUrl ?? process.env.DATABASE_URL ?? LOCAL_SERVER_URL);
  admin.pathname = '/postgres';
  const name = `${options.label}_${randomBytes(5).toString('hex')}`;
  await withAdmin(admin.toString(), (client) => client.query(`create database ${name}`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const pool = createPool({ connectionString: url.toString(), max: 4, applicationName: `${options.label}-runner` });
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    await withAdmin(admin.toString(), (client) => client.query(`drop database if exists ${name} with (force)`));
    throw error;
  }
  return {
    name,
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      await withAdmin(admin.toString(), (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at ${redact(url)} (${error instanceof Error ? error.message : String(error)}): ` +
        'start it, or set DATABASE_URL to a server this user may create databases on',
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
