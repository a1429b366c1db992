// The order worker process (`npm run worker`, via scripts/run.sh): polls the task queue with the
// saga and its activities, creates the scheduled jobs, and shuts down gracefully on SIGINT/SIGTERM.
import { existsSync } from 'node:fs';
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { ConfigError } from './platform/config/config-error.js';
import {
  loadAll,
  loadDatabaseSettings,
  loadSettlementSettings,
  loadStripeSettings,
  loadTemporalSettings,
  loadWorkerMetricsSettings,
} from './platform/config/settings.js';
import { createPool } from './platform/db/pool.js';
import { createLogger, temporalLogger } from './platform/logger.js';
import { ensureSchedules } from './operations/retention/schedules.js';
import { loadRetentionSettings } from './operations/retention/settings.js';
import { createStripeClient } from './money/stripe/client.js';
import { productionBundle } from './platform/temporal/bundle-workflows.js';
import { loadTemporalConnectConfig } from './platform/temporal/connection-config.js';
import { createOrderWorker } from './platform/temporal/order-worker.js';
import { startTracing } from './platform/telemetry/tracing.js';
import { workerTelemetryOptions } from './platform/telemetry/worker-telemetry.js';
import { startFailureLine } from './platform/tools/bootstrap-error.js';

const logger = createLogger('worker');

async function main(): Promise<void> {
  const settings = loadAll({
    temporal: loadTemporalSettings,
    database: loadDatabaseSettings,
    stripe: loadStripeSettings,
    connect: loadTemporalConnectConfig,
    settlement: loadSettlementSettings,
    metrics: loadWorkerMetricsSettings,
    retention: loadRetentionSettings,
  });
  // Traces (OTLP/HTTP with OTEL_EXPORTER_OTLP_ENDPOINT, or the local store with TRACE_FILE); null: off.
  const tracing = startTracing('order-payments-worker');
  // Production loads the workflow code bundled ahead of time (npm run build): the reviewed,
  // replay-tested bytes, and a start in milliseconds instead of seconds. The bundle with the
  // workflow's tracing interceptors only when tracing is on: they cost memory and CPU per run.
  const bundlePath =
    process.env.WORKFLOW_BUNDLE_PATH?.trim() || (process.env.NODE_ENV === 'production' ? productionBundle(tracing !== null) : undefined);
  if (bundlePath && !existsSync(bundlePath)) {
    throw new ConfigError([`WORKFLOW_BUNDLE_PATH: no workflow bundle at ${bundlePath}: run npm run build`]);
  }

  // SIGINT and SIGTERM begin a graceful shutdown: polling stops, in-flight activities get the
  // grace period to finish and report, then run() resolves and the pool closes.
  // Runtime.install comes before any NativeConnection: the telemetry (the Prometheus endpoint) is the runtime's.
  const telemetryOptions = workerTelemetryOptions(settings.metrics.port);
  try {
    Runtime.install({ logger: temporalLogger(logger), shutdownSignals: ['SIGINT', 'SIGTERM'], ...(telemetryOptions && { telemetryOptions }) });
  } catch (error) {
    if (telemetryOptions && error instanceof Error && /metrics exporter/i.test(error.message)) {
      throw new ConfigError([`WORKER_METRICS_PORT: cannot serve metrics on 127.0.0.1:${settings.metrics.port} (${error.message}); pick a free port, or 0 to turn them off`]);
    }
    throw error;
  }
  const connection = await NativeConnection.connect(settings.connect.connectionOptions);
  const db = createPool({ connectionString: settings.database.url, max: settings.database.poolSize, applicationName: 'order-payments-worker' });
  const stripe = createStripeClient({ secretKey: settings.stripe.secretKey, apiBase: settings.stripe.apiBase });
  try {
    const worker = await createOrderWorker({
      connection,
      namespace: settings.connect.namespace,
      taskQueue: settings.temporal.taskQueue,
      deps: { db, stripe, ...settings.settlement, keyRetentionMs: settings.retention.activityKeyMs },
      workflowBundlePath: bundlePath,
      tracing,
    });
    // The scheduled jobs (reaper, daily reconciliation) run on this worker; see schedules.ts for
    // why the worker, not a separate command, creates them. Payments matter more than retention:
    // a worker that cannot write the schedules says so and polls anyway; the next start retries.
    const schedules = await ensureSchedules(
      new Client({ connection, namespace: settings.connect.namespace }),
      settings.temporal.taskQueue,
      settings.retention,
    ).catch((error: unknown) => {
      logger.error({ err: error }, 'could not create or update the scheduled jobs (reaper, reconciliation); polling anyway');
      return [];
    });
    logger.info(
      {
        taskQueue: settings.temporal.taskQueue,
        schedules,
        namespace: settings.connect.namespace,
        stripe: settings.stripe.apiBase ?? 'Stripe test mode',
        workflows: bundlePath ?? 'bundled from source',
        metrics: settings.metrics.port === null ? 'off' : `http://127.0.0.1:${settings.metrics.port}/metrics`,
        traces: tracing ? 'on' : 'off',
      },
      'worker started',
    );
    await worker.run();
    logger.info('worker stopped');
  } finally {
    await db.end();
    await connection.close();
    await tracing?.shutdown();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`worker: ${error.message}`);
    process.exit(2);
  }
  // One line a person can act on; the structured log keeps the details for the log pipeline.
  logger.debug({ err: error }, 'worker failed');
  console.error(`worker: ${startFailureLine(error)}`);
  process.exit(1);
});
