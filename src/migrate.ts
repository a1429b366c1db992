// The migration command (`npm run db:migrate`): applies the pending SQL migrations to DATABASE_URL.
import { Command } from 'commander';
import { ConfigError } from './platform/config/config-error.js';
import { loadDatabaseSettings } from './platform/config/settings.js';
import { migrate, UnknownMigrationError } from './platform/db/migrate.js';
import { createPool } from './platform/db/pool.js';

const program = new Command('db:migrate')
  .description(
    'Apply the SQL migrations in migrations/ that have not run yet to DATABASE_URL, each once, in name order.\n' +
      'Exit codes: 0 done, 1 a migration failed, 2 bad configuration or arguments.',
  )
  .option('--through <file>', 'apply migrations up to and including this file only (the expand step of an expand-then-contract change, e.g. 014_outbox_event_key.sql)')
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .configureOutput({ writeErr: (text) => process.stderr.write(`db:migrate: ${text}`) });

async function main(): Promise<void> {
  const flags = program.parse().opts<{ through?: string }>();
  const settings = loadDatabaseSettings();
  const pool = createPool({ connectionString: settings.url, max: 2, applicationName: 'order-payments-migrate' });
  try {
    const { applied, alreadyApplied } = await migrate(pool, undefined, { through: flags.through });
    for (const name of applied) console.log(`applied ${name}`);
    console.log(`${applied.length} applied, ${alreadyApplied.length} already applied`);
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(`db:migrate: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof ConfigError || error instanceof UnknownMigrationError ? 2 : 1);
});
