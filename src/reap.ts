// The reaper command (`npm run reap -- --once`): one retention sweep by hand, the same one the
// worker's Temporal Schedule runs.
import { Command } from 'commander';
import { exitWhenDone } from './platform/config/cli-exit.js';
import { loadAll, loadDatabaseSettings } from './platform/config/settings.js';
import { createPool } from './platform/db/pool.js';
import { reapExpired, REAPED_TABLES } from './operations/retention/reaper.js';
import { loadRetentionSettings } from './operations/retention/settings.js';

/** Exit codes a scheduler or a person can act on. */
const Exit = { swept: 0, tableFailed: 1, badConfig: 2, couldNotRun: 3 } as const;

const program = new Command('reap')
  .description(
    'Delete what is past its retention horizon, by hand: expired activity keys, sent outbox rows, old webhook events and inbox receipts.\n' +
      'The worker runs the same sweep as a Temporal Schedule; this is for an operator who wants it now.\n' +
      'Reads DATABASE_URL and the RETENTION_* settings (README, "Retention").\n' +
      'Exit codes: 0 every table swept, 1 some table could not be swept (the others were), 2 bad configuration or arguments, 3 the sweep could not run.',
  )
  .requiredOption('--once', 'sweep once and exit (the only mode: the schedule is what repeats it)')
  .option('--json', 'print one JSON object instead of text', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.swept : Exit.badConfig))
  .configureOutput({ writeErr: (text) => process.stderr.write(`reap: ${text}`) });

async function main(): Promise<number> {
  const flags = program.parse().opts<{ once: true; json: boolean }>();
  const settings = loadAll({ database: loadDatabaseSettings, retention: loadRetentionSettings });
  const db = createPool({ connectionString: settings.database.url, max: 1, applicationName: 'order-payments-reaper' });
  try {
    // An unreachable database is one failure (exit 3), not one per table.
    await db.query('select 1');
    const report = await reapExpired(db, settings.retention);
    if (flags.json) {
      console.log(JSON.stringify(report));
    } else {
      for (const table of REAPED_TABLES) console.log(`reap: ${table.padEnd(22)} ${report.deleted[table]} deleted`);
      if (report.expiredOpenKeys > 0) {
        console.log(`reap: ${report.expiredOpenKeys} expired activity key(s) still open (pending or processing) were kept; npm run reconcile says which orders need a look`);
      }
      for (const failure of report.failures) console.error(`reap: ${failure.table} could not be swept: ${failure.message}`);
    }
    return report.failures.length > 0 ? Exit.tableFailed : Exit.swept;
  } finally {
    await db.end();
  }
}

exitWhenDone('reap', main(), { badConfig: Exit.badConfig, failed: Exit.couldNotRun }, 'the sweep could not run');
