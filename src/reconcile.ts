// The reconciliation command (`npm run reconcile`): checks invariants I1–I8 against Stripe and
// PostgreSQL now, or prints the scheduled daily run's last report with --last.
import { Client, Connection } from '@temporalio/client';
import { Command, InvalidArgumentError } from 'commander';
import { exitWhenDone } from './platform/config/cli-exit.js';
import { loadAll, loadDatabaseSettings, loadStripeSettings, loadTemporalSettings } from './platform/config/settings.js';
import { createPool } from './platform/db/pool.js';
import { orderInputSchema } from './domain/order-input.js';
import { lastReconciliationReport, reconciliationScheduleId } from './operations/retention/schedules.js';
import { createStripeClient } from './money/stripe/client.js';
import { loadTemporalConnectConfig } from './platform/temporal/connection-config.js';
import { dataConverterFor } from './platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from './platform/temporal/payload-encryption/settings.js';
import { checkInvariants } from './operations/reconcile/invariant-checker.js';
import { formatSummary, summarize } from './operations/reconcile/summary.js';

/** Exit codes a scheduler can alert on. */
const Exit = { clean: 0, violations: 1, badConfig: 2, checkFailed: 3 } as const;

const collectOrderId = (value: string, previous: string[]): string[] => {
  const parsed = orderInputSchema.shape.orderId.safeParse(value);
  if (!parsed.success) throw new InvalidArgumentError(parsed.error.issues.map((issue) => issue.message).join('; '));
  return [...previous, parsed.data];
};

const program = new Command('reconcile')
  .description(
    'Check invariants I1-I8 for every order (or the given ones) by reading Stripe and the ledger, stock and orders in PostgreSQL.\n' +
      'Reads DATABASE_URL, STRIPE_SECRET_KEY and STRIPE_API_BASE (unset: Stripe test mode).\n' +
      'Exit codes: 0 no violations, 1 violations found, 2 bad configuration or arguments, 3 the check could not run.',
  )
  .option('--order-id <id>', 'check only this order; repeat for more', collectOrderId, [])
  .option('--json', 'print one JSON object instead of text', false)
  .option(
    '--last',
    "print the last report of the scheduled daily reconciliation instead of checking now (reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TASK_QUEUE; exit 3 if it has none yet)",
    false,
  )
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.clean : Exit.badConfig))
  .configureOutput({ writeErr: (text) => process.stderr.write(`reconcile: ${text}`) });

async function main(): Promise<number> {
  const flags = program.parse().opts<{ orderId: string[]; json: boolean; last: boolean }>();
  if (flags.last) return printLastScheduledReport(flags.json);
  const settings = loadAll({ database: loadDatabaseSettings, stripe: loadStripeSettings });
  const db = createPool({ connectionString: settings.database.url, max: 4, applicationName: 'order-payments-reconcile' });
  // Reads only, so the SDK may retry them itself.
  const stripe = createStripeClient({ secretKey: settings.stripe.secretKey, apiBase: settings.stripe.apiBase, maxNetworkRetries: 2 });
  try {
    const report = await checkInvariants({ db, stripe, ...(flags.orderId.length > 0 && { orderIds: flags.orderId }) });
    const summary = summarize(report);
    console.log(flags.json ? JSON.stringify(summary) : formatSummary(summary));
    return summary.ok ? Exit.clean : Exit.violations;
  } finally {
    await db.end();
  }
}

/** The report the daily reconciliation's schedule (src/operations/retention/schedules.ts) last produced. */
async function printLastScheduledReport(json: boolean): Promise<number> {
  const settings = loadAll({ temporal: loadTemporalSettings, connect: loadTemporalConnectConfig, encryption: loadPayloadEncryptionSettings });
  const connection = await Connection.connect(settings.connect.connectionOptions);
  try {
    const client = new Client({ connection, namespace: settings.connect.namespace, dataConverter: dataConverterFor(settings.encryption) });
    const report = await lastReconciliationReport(client, settings.temporal.taskQueue);
    if (!report) throw new Error(`the schedule ${reconciliationScheduleId(settings.temporal.taskQueue)} has no finished report yet`);
    console.log(json ? JSON.stringify(report) : `${formatSummary({ ...report, orders: [] })}\n(the scheduled run's report; ${report.violationCount} violation(s) in all)`);
    return report.ok ? Exit.clean : Exit.violations;
  } finally {
    await connection.close();
  }
}

exitWhenDone('reconcile', main(), { badConfig: Exit.badConfig, failed: Exit.checkFailed }, 'the check could not run');
