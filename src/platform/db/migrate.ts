// Applies the numbered SQL files in migrations/ that have not run yet, each in its own
// transaction, serialised across concurrent migrators by an advisory lock.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from 'pg';
import { withTransaction } from './transaction.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

// Any constant works as long as every migrator agrees on it: it serialises concurrent
// migrators (two workers starting together) on the database itself.
const MIGRATION_LOCK_ID = 7_240_512_001;

/** The role that owns the schema (migration 017): every later migration runs as it. */
export const MIGRATOR_ROLE = 'order_payments_migrator';

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export interface MigrateOptions {
  /**
   * Apply the migrations up to and including this file, and none after it: the first half of an
   * expand-then-contract change, whose contracting migration must wait until every process runs
   * the new code (migrations 014 and 015). Unset: every migration.
   */
  through?: string;
}

/** `through` names no migration file: nothing was applied. */
export class UnknownMigrationError extends Error {
  override readonly name = 'UnknownMigrationError';
  constructor(readonly migration: string) {
    super(`no migration named '${migration}' in migrations/ (give a file name such as 014_outbox_event_key.sql)`);
  }
}

/**
 * Applies every numbered `.sql` file in `migrations/` that has not been applied yet (up to
 * `options.through`, when given), each in its own transaction with its bookkeeping row. A second
 * migrator waits on the advisory lock and then finds nothing left to do.
 */
export async function migrate(pool: Pool, directory = MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<MigrationResult> {
  const all = (await readdir(directory)).filter((name) => /^\d+_.+\.sql$/.test(name)).sort();
  const { through } = options;
  if (through !== undefined && !all.includes(through)) throw new UnknownMigrationError(through);
  const files = through === undefined ? all : all.filter((name) => name <= through);
  const lockClient = await pool.connect();
  try {
    await lockClient.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await lockClient.query(`
      create table if not exists schema_migrations (
        name       text primary key,
        applied_at timestamptz not null default now()
      )`);
    const { rows } = await lockClient.query<{ name: string }>('select name from schema_migrations');
    const done = new Set(rows.map((row) => row.name));
    const result: MigrationResult = { applied: [], alreadyApplied: [] };
    for (const name of files) {
      if (done.has(name)) {
        result.alreadyApplied.push(name);
        continue;
      }
      const sql = await readFile(path.join(directory, name), 'utf8');
      await withTransaction(pool, async (client) => {
        // Once migration 017 made the migrator the schema's owner, each migration runs as it, so
        // what it creates is the migrator's too, whoever logged in (a superuser, or a member). A
        // migration that needs more (creating a role) says `reset role;` at its top.
        // (Roles are the cluster's: the role may exist from another database, so ownership of
        // this database's bookkeeping table is what says 017 ran here.)
        const { rows: asMigrator } = await client.query<{ ok: boolean }>(
          `select coalesce(bool_and(pg_has_role(current_user, r.oid, 'member')), false) as ok
             from pg_class c join pg_roles r on r.oid = c.relowner
            where c.oid = to_regclass('schema_migrations') and r.rolname = $1`,
          [MIGRATOR_ROLE],
        );
        if (asMigrator[0]?.ok) await client.query(`set local role ${MIGRATOR_ROLE}`);
        await client.query(sql);
        await client.query('insert into schema_migrations (name) values ($1)', [name]);
      });
      result.applied.push(name);
    }
    return result;
  } finally {
    await lockClient.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    lockClient.release();
  }
}
