// The outbox dispatcher process (`npm run outbox-dispatcher`, via scripts/run.sh): publishes the
// outbox to JetStream until SIGINT or SIGTERM, with its metrics listener.
import { jetstream } from '@nats-io/jetstream';
import { pino } from 'pino';
import { ConfigError } from './platform/config/config-error.js';
import { loadAll, loadDatabaseSettings, loadMetricsListenerSettings } from './platform/config/settings.js';
import { createPool } from './platform/db/pool.js';
import { connectNats } from './messaging/nats/nats-connection.js';
import { loadNatsSettings } from './messaging/nats/nats-settings.js';
import { ensureOrderEventsStream } from './messaging/nats/order-events-stream.js';
import { createOutboxMetrics } from './platform/telemetry/messaging-metrics.js';
import { loggerOptions } from './platform/logger-options.js';
import { startMetricsServer } from './platform/telemetry/metrics-server.js';
import { startTracing } from './platform/telemetry/tracing.js';
import { createOutboxDispatcher } from './messaging/outbox/dispatcher.js';
import { loadOutboxSettings } from './messaging/outbox/outbox-settings.js';
import { startFailureLine } from './platform/tools/bootstrap-error.js';
import { releaseBuildId } from './platform/build-info.js';
import { registerBuildInfo } from './platform/telemetry/build-info-metric.js';

// The same JSON lines as createLogger (trace_id and span_id inside a span, secrets redacted),
// without loading the Temporal worker runtime this service never uses.
const logger = pino(loggerOptions('outbox-dispatcher'));

/** `npm run outbox-dispatcher`: publishes the outbox to JetStream until SIGINT or SIGTERM. */
async function main(): Promise<void> {
  const buildId = releaseBuildId();
  logger.info({ buildId }, 'outbox dispatcher starting');
  const settings = loadAll({
    database: loadDatabaseSettings,
    nats: loadNatsSettings,
    outbox: loadOutboxSettings,
    metrics: () => loadMetricsListenerSettings('METRICS_PORT', 9466),
  });
  const { nats } = settings;

  // Traces (OTLP/HTTP with OTEL_EXPORTER_OTLP_ENDPOINT, or the local store with TRACE_FILE); null: off.
  const tracing = startTracing('order-payments-outbox');
  logger.info({ nats: nats.url, credentials: nats.seedFile ? 'nkey' : 'none' }, 'connecting to NATS');
  const nc = await connectNats({ url: nats.url, name: 'outbox-dispatcher', waitOnFirstConnect: true, seedFile: nats.seedFile, tlsCaFile: nats.tlsCaFile });
  const db = createPool({ connectionString: settings.database.url, max: 2, applicationName: 'order-payments-outbox-dispatcher' });
  const metrics = createOutboxMetrics(db);
  registerBuildInfo(metrics.registry, { service: 'outbox-dispatcher', buildId });
  const metricsServer =
    settings.metrics.port === null ? null : await startMetricsServer(metrics.registry, { port: settings.metrics.port, host: settings.metrics.host });
  try {
    await ensureOrderEventsStream(nc, nats);
    const dispatcher = createOutboxDispatcher({
      db,
      js: jetstream(nc),
      subjectPrefix: nats.subjectPrefix,
      logger,
      batchSize: settings.outbox.batchSize,
      idleDelayMs: settings.outbox.pollIntervalMs,
      metrics,
    });
    // A signal lets the batch in hand finish publishing and commit, then the loop stops.
    const stop = new AbortController();
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => {
      stop.abort();
    });
    logger.info(
      {
        stream: nats.stream,
        subjects: `${nats.subjectPrefix}.>`,
        duplicateWindowMs: nats.duplicateWindowMs,
        metrics: metricsServer?.url ?? 'off',
        traces: tracing ? 'on' : 'off',
      },
      'outbox dispatcher started',
    );
    await dispatcher.run(stop.signal);
    logger.info('outbox dispatcher stopped');
  } finally {
    await nc.drain().catch(() => undefined);
    await metricsServer?.close();
    await db.end();
    await tracing?.shutdown();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`outbox-dispatcher: ${error.message}`);
    process.exit(2);
  }
  // One line a person can act on; the structured log keeps the details for the log pipeline.
  logger.debug({ err: error }, 'outbox dispatcher failed');
  console.error(`outbox-dispatcher: ${startFailureLine(error)}`);
  process.exit(1);
});
