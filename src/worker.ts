// The order worker process (`npm run worker`, via scripts/run.sh): polls the task queue as one
// build of the worker deployment, with the saga and its activities, creates the scheduled jobs,
// and shuts down gracefully on SIGINT/SIGTERM.
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { loadWorkflowCode, productionBundle } from './platform/temporal/bundle-workflows.js';
import { loadWorkerDeploymentSettings, versionName, type WorkerDeployment, type WorkerDeploymentSettings } from './platform/temporal/worker-deployment.js';
import { becomeCurrent, describeDeployment, UnknownDeploymentError } from './operations/deploy/deployment-routing.js';
import { loadTemporalConnectConfig } from './platform/temporal/connection-config.js';
import { createOrderWorker } from './platform/temporal/order-worker.js';
import { dataConverterFor } from './platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from './platform/temporal/payload-encryption/settings.js';
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
    deployment: loadWorkerDeploymentSettings,
    encryption: loadPayloadEncryptionSettings,
  });
  const dataConverter = dataConverterFor(settings.encryption);
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
  // The build ID names the workflow code, so it is known before anything else is said.
  const workflowCode = await loadWorkflowCode({ bundlePath, tracing: tracing !== null, buildIdOverride: settings.deployment.buildIdOverride });
  const deployment: WorkerDeployment = { deploymentName: settings.deployment.deploymentName, buildId: workflowCode.buildId };
  logger.info({ buildId: deployment.buildId, deployment: deployment.deploymentName, rollout: settings.deployment.rollout }, 'worker starting');

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
  reportBuild(deployment);
  const connection = await NativeConnection.connect(settings.connect.connectionOptions);
  const db = createPool({ connectionString: settings.database.url, max: settings.database.poolSize, applicationName: 'order-payments-worker' });
  const stripe = createStripeClient({ secretKey: settings.stripe.secretKey, apiBase: settings.stripe.apiBase });
  try {
    const worker = await createOrderWorker({
      connection,
      namespace: settings.connect.namespace,
      taskQueue: settings.temporal.taskQueue,
      deps: { db, stripe, ...settings.settlement, keyRetentionMs: settings.retention.activityKeyMs },
      dataConverter,
      deployment,
      workflowBundle: workflowCode.bundle,
      tracing,
    });
    const client = new Client({ connection, namespace: settings.connect.namespace, dataConverter });
    // The scheduled jobs (reaper, daily reconciliation) run on this worker; see schedules.ts for
    // why the worker, not a separate command, creates them. Payments matter more than retention:
    // a worker that cannot write the schedules says so and polls anyway; the next start retries.
    const schedules = await ensureSchedules(
      client,
      settings.temporal.taskQueue,
      settings.retention,
    ).catch((error: unknown) => {
      logger.error({ err: error }, 'could not create or update the scheduled jobs (reaper, reconciliation); polling anyway');
      return [];
    });
    const running = worker.run();
    // Polling has begun: the server knows this build, so it can be made current.
    const routing = await rollOut(client, deployment, settings.deployment).catch((error: unknown) => {
      logger.error({ err: error, buildId: deployment.buildId }, 'could not read or change the deployment\'s routing; polling anyway');
      return 'unknown';
    });
    logger.info(
      {
        buildId: deployment.buildId,
        deployment: deployment.deploymentName,
        routing,
        taskQueue: settings.temporal.taskQueue,
        schedules,
        namespace: settings.connect.namespace,
        stripe: settings.stripe.apiBase ?? 'Stripe test mode',
        workflows: bundlePath ?? 'bundled from source',
        metrics: settings.metrics.port === null ? 'off' : `http://127.0.0.1:${settings.metrics.port}/metrics`,
        traces: tracing ? 'on' : 'off',
        payloadKeys: `${settings.encryption.keys.describe()} (${settings.encryption.source})`,
      },
      'worker started',
    );
    await running;
    logger.info('worker stopped');
  } finally {
    await db.end();
    await connection.close();
    await tracing?.shutdown();
  }
}

/** The build this worker runs, as a metric beside the saga's: `order_payments_build_info{build_id, deployment}` = 1. */
function reportBuild(deployment: WorkerDeployment): void {
  Runtime.instance()
    .metricMeter.createGauge('order_payments_build_info', 'int', '', 'The build this process runs: always 1, labelled with its build ID')
    .set(1, { service: 'worker', build_id: deployment.buildId, deployment: deployment.deploymentName });
}

/**
 * `auto` (development): this build becomes current, and runs pinned to the build it replaced are
 * named, since they resume only on a worker of that build. `manual` (production): it only says
 * whether this build receives new runs; `npm run deploy` moves them.
 */
async function rollOut(client: Client, deployment: WorkerDeployment, settings: WorkerDeploymentSettings): Promise<string> {
  if (settings.rollout === 'auto') {
    const { replaced, strandedRuns } = await becomeCurrent(client, deployment, `worker ${process.pid} (WORKER_ROLLOUT=auto)`);
    if (replaced && strandedRuns > 0) {
      logger.warn(
        { buildId: deployment.buildId, replaced, strandedRuns },
        `the workflow code changed: new runs start on build ${deployment.buildId}; ${strandedRuns} run(s) started on build ${replaced} stay pinned to it and resume only when a worker of that build polls again (npm run deploy -- status)`,
      );
    } else if (replaced) {
      logger.info({ buildId: deployment.buildId, replaced }, `the workflow code changed: build ${deployment.buildId} replaces ${replaced}, which has no open runs`);
    }
    return 'current';
  }
  const state = await describeOnceKnown(client, deployment.deploymentName);
  if (state.current === deployment.buildId) return 'current';
  if (state.ramping?.buildId === deployment.buildId) return `ramping ${state.ramping.percentage}%`;
  logger.info(
    { buildId: deployment.buildId, current: state.current },
    `build ${deployment.buildId} is not current: new runs go to ${state.current ?? 'no build yet'}; roll it out with npm run deploy -- set-current ${deployment.buildId} (or ramp)`,
  );
  return `polling only (${versionName(deployment)} is neither current nor ramping)`;
}

/** The deployment as the server describes it, once it has registered this worker's first poll. */
async function describeOnceKnown(client: Client, deploymentName: string, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await describeDeployment(client, deploymentName);
    } catch (error) {
      if (!(error instanceof UnknownDeploymentError) || Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    // One line per bad setting, each naming the variable to set.
    for (const problem of error.problems) console.error(`worker: ${problem}`);
    process.exit(2);
  }
  // One line a person can act on; the structured log keeps the details for the log pipeline.
  logger.debug({ err: error }, 'worker failed');
  console.error(`worker: ${startFailureLine(error)}`);
  process.exit(1);
});
