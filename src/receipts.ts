// The receipts consumer process (`npm run receipts`, via scripts/run.sh): applies order events
// from JetStream to the receipts table, once each, until SIGINT or SIGTERM.
import { pino } from 'pino';
import { z } from 'zod';
import { ConfigError } from './platform/config/config-error.js';
import { loadAll, loadDatabaseSettings, loadMetricsListenerSettings } from './platform/config/settings.js';
import { createPool } from './platform/db/pool.js';
import { connectNats } from './messaging/nats/nats-connection.js';
import { loadNatsSettings } from './messaging/nats/nats-settings.js';
import { ensureOrderEventsStream } from './messaging/nats/order-events-stream.js';
import { createReceiptsMetrics } from './platform/telemetry/messaging-metrics.js';
import { loggerOptions } from './platform/logger-options.js';
import { startMetricsServer } from './platform/telemetry/metrics-server.js';
import { startTracing } from './platform/telemetry/tracing.js';
import { createReceiptsConsumer, ensureReceiptsConsumer } from './messaging/receipts/consumer.js';
import { startFailureLine } from './platform/tools/bootstrap-error.js';
import { releaseBuildId } from './platform/build-info.js';
import { registerBuildInfo } from './platform/telemetry/build-info-metric.js';

// The same JSON lines as createLogger (trace_id and span_id inside a span, secrets redacted),
// without loading the Temporal worker runtime this service never uses.
const logger = pino(loggerOptions('receipts'));

function loadReceiptsSettings(env: Record<string, string | undefined> = process.env): { durable: string } {
  const parsed = z
    .object({
      /** The durable consumer's name: every instance of the service shares it. Default receipts. */
      RECEIPTS_DURABLE: z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be letters, digits, '-' or '_' (e.g. receipts)").default('receipts'),
    })
    .safeParse({ RECEIPTS_DURABLE: env.RECEIPTS_DURABLE?.trim() || undefined });
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return { durable: parsed.data.RECEIPTS_DURABLE };
}

/** `npm run receipts`: applies order events to the receipts table, once each, until SIGINT or SIGTERM. */
async function main(): Promise<void> {
  const buildId = releaseBuildId();
  logger.info({ buildId }, 'receipts consumer starting');
  const settings = loadAll({
    database: loadDatabaseSettings,
    nats: loadNatsSettings,
    receipts: loadReceiptsSettings,
    metrics: () => loadMetricsListenerSettings('METRICS_PORT', 9467),
  });
  const { nats } = settings;

  // Traces (OTLP/HTTP with OTEL_EXPORTER_OTLP_ENDPOINT, or the local store with TRACE_FILE); null: off.
  const tracing = startTracing('order-payments-receipts');
  logger.info({ nats: nats.url, credentials: nats.seedFile ? 'nkey' : 'none' }, 'connecting to NATS');
  const nc = await connectNats({ url: nats.url, name: 'receipts', waitOnFirstConnect: true, seedFile: nats.seedFile, tlsCaFile: nats.tlsCaFile });
  const db = createPool({ connectionString: settings.database.url, max: 2, applicationName: 'order-payments-receipts' });
  const metrics = createReceiptsMetrics();
  registerBuildInfo(metrics.registry, { service: 'receipts', buildId });
  const metricsServer =
    settings.metrics.port === null ? null : await startMetricsServer(metrics.registry, { port: settings.metrics.port, host: settings.metrics.host });
  try {
    // The stream may not exist yet if the dispatcher has never run: either side creates it.
    await ensureOrderEventsStream(nc, nats);
    const config = { stream: nats.stream, durable: settings.receipts.durable, subjectPrefix: nats.subjectPrefix };
    await ensureReceiptsConsumer(nc, config);
    const consumer = createReceiptsConsumer({ ...config, db, nc, logger, metrics });
    const stop = new AbortController();
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => {
      stop.abort();
    });
    logger.info({ ...config, metrics: metricsServer?.url ?? 'off', traces: tracing ? 'on' : 'off' }, 'receipts consumer started');
    await consumer.run(stop.signal);
    logger.info('receipts consumer stopped');
  } finally {
    await nc.drain().catch(() => undefined);
    await metricsServer?.close();
    await db.end();
    await tracing?.shutdown();
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`receipts: ${error.message}`);
    process.exit(2);
  }
  // One line a person can act on; the structured log keeps the details for the log pipeline.
  logger.debug({ err: error }, 'receipts consumer failed');
  console.error(`receipts: ${startFailureLine(error)}`);
  process.exit(1);
});
