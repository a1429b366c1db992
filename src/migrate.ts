// The migration command (`npm run db:migrate`): applies the pending SQL migrations to DATABASE_URL.
import { ConfigError } from './platform/config/config-error.js';
import { loadDatabaseSettings } from './platform/config/settings.js';
import { migrate } from './platform/db/migrate.js';
import { createPool } from './platform/db/pool.js';

async function main(): Promise<void> {
  const settings = loadDatabaseSettings();
  const pool = createPool({ connectionString: settings.url, max: 2, applicationName: 'order-payments-migrate' });
  try {
    const { applied, alreadyApplied } = await migrate(pool);
    for (const name of applied) console.log(`applied ${name}`);
    console.log(`${applied.length} applied, ${alreadyApplied.length} already applied`);
  } finally {
    await pool.end();
  }
}

main().catch((error: unknown) => {
  console.error(`db:migrate: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
