// The orders API process (`npm run api`, via scripts/run.sh): the HTTP service with Stripe
// webhooks and its metrics listener, plus the `keys create|list|revoke` and `reap` subcommands.
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Command, InvalidArgumentError } from 'commander';
import { reapApiIdempotency } from './api/idempotency/reaper.js';
import { loadApiIdempotencySettings } from './api/idempotency/settings.js';
import { ConfigError } from './platform/config/config-error.js';
import {
  loadAll,
  loadApiSettings,
  loadDisputeSettings,
  loadFraudWarningPolicy,
  loadDatabaseSettings,
  loadMetricsListenerSettings,
  loadStripeWebhookSettings,
  loadTemporalSettings,
} from './platform/config/settings.js';
import { createPool } from './platform/db/pool.js';
import { createLogger } from './platform/logger.js';
import { apiMetricsRegistry } from './platform/telemetry/api-metrics.js';
import { startMetricsServer, type MetricsServer } from './platform/telemetry/metrics-server.js';
import { startTracing } from './platform/telemetry/tracing.js';
import { loadTemporalConnectConfig } from './platform/temporal/connection-config.js';
import { dataConverterFor } from './platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from './platform/temporal/payload-encryption/settings.js';
import { temporalSignaller } from './messaging/webhooks/workflow-handoff.js';
import { disputeSignaller, fraudWarningStarter } from './messaging/webhooks/dispute-handoff.js';
import {
  API_KEY_PREFIX_PATTERN,
  API_KEY_SCOPES,
  createApiKey,
  InvalidScopeError,
  InvalidTenantIdError,
  listApiKeys,
  parseScopes,
  revokeApiKey,
  UnknownApiKeyPrefixError,
} from './api/auth/api-keys.js';
import { loadRateLimitSettings } from './api/rate-limit.js';
import { buildApiServer } from './api/server.js';
import { startFailureLine } from './platform/tools/bootstrap-error.js';
import { releaseBuildId } from './platform/build-info.js';
import { registerBuildInfo } from './platform/telemetry/build-info-metric.js';

const logger = createLogger('api');

/** How often the running service reaps expired Idempotency-Key records. */
const REAP_INTERVAL_MS = 10 * 60_000;

/**
 * `npm run api`: the HTTP service. Env: API_PORT (default 3000), API_HOST (default 127.0.0.1),
 * DATABASE_URL, STRIPE_WEBHOOK_SECRET (whsec_...), STRIPE_WEBHOOK_TOLERANCE_SECONDS (default
 * 300), Temporal's TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_TASK_QUEUE, and
 * API_IDEMPOTENCY_RETENTION_HOURS / API_IDEMPOTENCY_TOMBSTONE_DAYS / API_IDEMPOTENCY_LEASE_SECONDS, and
 * API_OUTCOME_WAIT_MS (default 10000), API_REQUEST_TIMEOUT_MS (default 10000), API_RATE_LIMIT_PER_MINUTE
 * (per tenant, default 600, 0 = off), API_IP_RATE_LIMIT_PER_MINUTE (per client address before auth,
 * default 1200), API_TRUST_PROXY (proxies whose X-Forwarded-For names the client) and REDIS_URL
 * (the limits' shared counters; unset: counted in this process).
 * Bad configuration exits 2 before anything starts.
 */
async function serve(): Promise<void> {
  const buildId = releaseBuildId();
  logger.info({ buildId }, 'api starting');
  const settings = loadAll({
    api: loadApiSettings,
    database: loadDatabaseSettings,
    webhook: loadStripeWebhookSettings,
    temporal: loadTemporalSettings,
    idempotency: loadApiIdempotencySettings,
    connect: loadTemporalConnectConfig,
    rateLimit: loadRateLimitSettings,
    metrics: () => loadMetricsListenerSettings('API_METRICS_PORT', 9465),
    encryption: loadPayloadEncryptionSettings,
    disputes: loadDisputeSettings,
    fraudWarningPolicy: loadFraudWarningPolicy,
  });
  const db = createPool({ connectionString: settings.database.url, max: settings.database.poolSize, applicationName: 'order-payments-api' });
  // Traces (OTLP/HTTP with OTEL_EXPORTER_OTLP_ENDPOINT, or the local store with TRACE_FILE); null: off.
  const tracing = startTracing('order-payments-api');
  const connection = await Connection.connect(settings.connect.connectionOptions);
  const client = new Client({
    connection,
    namespace: settings.connect.namespace,
    dataConverter: dataConverterFor(settings.encryption),
    // The workflow start and update carry the request's trace context to the workflow's spans.
    ...(tracing && { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } }),
  });
  const app = await buildApiServer({
    db,
    signalPaymentEvent: temporalSignaller(client),
    signalDispute: disputeSignaller(client, { taskQueue: settings.temporal.taskQueue, settings: settings.disputes }),
    startFraudWarning: fraudWarningStarter(client, { taskQueue: settings.temporal.taskQueue, policy: settings.fraudWarningPolicy }),
    stripeWebhook: settings.webhook,
    logger,
    temporal: { client, taskQueue: settings.temporal.taskQueue },
    apiIdempotency: settings.idempotency,
    outcomeWaitMs: settings.api.outcomeWaitMs,
    requestTimeoutMs: settings.api.requestTimeoutMs,
    trustProxy: settings.api.trustProxy,
    rateLimit: settings.rateLimit,
  });
  const reap = () => {
    reapApiIdempotency(db, { tombstoneMs: settings.idempotency.tombstoneMs }).then(
      (result) => {
        if (result.compacted + result.deleted > 0) logger.info(result, 'reaped expired Idempotency-Key records');
      },
      (error: unknown) => {
        logger.warn({ err: error }, 'reaping Idempotency-Key records failed; next round retries');
      },
    );
  };
  const reaper = setInterval(reap, REAP_INTERVAL_MS);
  reaper.unref();

  let metricsServer: MetricsServer | null = null;
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    clearInterval(reaper);
    logger.info({ signal }, 'api stopping: finishing requests and hand-offs');
    // close() waits for in-flight requests and the hand-offs already started.
    app
      .close()
      .then(() => Promise.all([db.end(), connection.close(), metricsServer?.close(), tracing?.shutdown()]))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'api failed to close cleanly');
          process.exit(1);
        },
      );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  const address = await app.listen({ port: settings.api.port, host: settings.api.host });
  // Metrics on a listener of their own, never on the public port.
  registerBuildInfo(apiMetricsRegistry, { service: 'api', buildId });
  metricsServer = settings.metrics.port === null ? null : await startMetricsServer(apiMetricsRegistry, { port: settings.metrics.port, host: settings.metrics.host });
  logger.info({ address, temporalNamespace: settings.connect.namespace, metrics: metricsServer?.url ?? 'off' }, `api listening on ${address}`);
  reap();
}

/** `npm run api -- keys create --tenant ID [--scopes ...] [--expires-in-days N]`: the key is printed once, alone on the last line. */
async function createKey(options: { tenant: string; scopes: string; expiresInDays?: number }): Promise<void> {
  const scopes = parseScopes(options.scopes);
  const expiresAt = options.expiresInDays === undefined ? null : new Date(Date.now() + options.expiresInDays * 24 * 60 * 60 * 1000);
  const settings = loadDatabaseSettings();
  const db = createPool({ connectionString: settings.url, max: 1, applicationName: 'order-payments-api-keys' });
  try {
    const created = await createApiKey(db, options.tenant, { scopes, expiresAt });
    const limits = `scopes ${scopes.join(', ')}; ${expiresAt ? `expires ${expiresAt.toISOString()}` : 'no expiry'}`;
    console.log(`API key ${created.prefix}… created for tenant '${options.tenant}' (${limits}). Only its SHA-256 is stored: copy it now, it cannot be shown again.`);
    console.log(created.key);
  } finally {
    await db.end();
  }
}

/** `npm run api -- keys list --tenant ID`: prefixes and times, never keys (only their hashes are stored). */
async function listKeys(tenantId: string): Promise<void> {
  const settings = loadDatabaseSettings();
  const db = createPool({ connectionString: settings.url, max: 1, applicationName: 'order-payments-api-keys' });
  try {
    const keys = await listApiKeys(db, tenantId);
    if (keys.length === 0) {
      console.log(`tenant '${tenantId}' has no API keys (create one with: npm run api -- keys create --tenant ${tenantId})`);
      return;
    }
    console.log('prefix      created_at                expires_at                revoked_at                scopes');
    const at = (date: Date | null) => (date ? date.toISOString() : '-'.padEnd(24));
    for (const key of keys) console.log(`${key.prefix}  ${at(key.createdAt)}  ${at(key.expiresAt)}  ${at(key.revokedAt)}  ${key.scopes.join(',')}`);
  } finally {
    await db.end();
  }
}

/** `npm run api -- keys revoke --prefix opk_xxxxxx`: the key is refused from its next request on. */
async function revokeKey(prefix: string): Promise<void> {
  const settings = loadDatabaseSettings();
  const db = createPool({ connectionString: settings.url, max: 1, applicationName: 'order-payments-api-keys' });
  try {
    const revoked = await revokeApiKey(db, prefix);
    console.log(
      revoked.alreadyRevoked
        ? `API key ${revoked.prefix}… of tenant '${revoked.tenantId}' was already revoked at ${revoked.revokedAt.toISOString()}`
        : `API key ${revoked.prefix}… of tenant '${revoked.tenantId}' revoked at ${revoked.revokedAt.toISOString()}: its next request gets 401`,
    );
  } finally {
    await db.end();
  }
}

/** `npm run api -- reap`: one reaping pass, for cron or an operator. */
async function reapOnce(): Promise<void> {
  const settings = loadAll({ database: loadDatabaseSettings, idempotency: loadApiIdempotencySettings });
  const db = createPool({ connectionString: settings.database.url, max: 1, applicationName: 'order-payments-api-reaper' });
  try {
    const result = await reapApiIdempotency(db, { tombstoneMs: settings.idempotency.tombstoneMs });
    console.log(`reaped: ${result.compacted} expired record(s) compacted to tombstones, ${result.deleted} expired tombstone(s) deleted`);
  } finally {
    await db.end();
  }
}

/**
 * Exit codes: 0 done; 1 an unexpected failure (logged); 2 bad configuration or usage (a missing
 * option, a malformed tenant ID or key prefix); 3 `keys revoke` named a prefix no key has.
 */
function fail(error: unknown): never {
  if (error instanceof ConfigError) {
    // One line per bad setting, each naming the variable to set.
    for (const problem of error.problems) console.error(`api: ${problem}`);
    process.exit(2);
  }
  if (error instanceof InvalidTenantIdError || error instanceof InvalidScopeError) {
    console.error(`api: ${error.message}`);
    process.exit(2);
  }
  if (error instanceof UnknownApiKeyPrefixError) {
    console.error(`api: ${error.message}`);
    process.exit(API_KEY_PREFIX_PATTERN.test(error.prefix) ? 3 : 2);
  }
  // One line a person can act on; the structured log keeps the details for the log pipeline.
  logger.debug({ err: error }, 'api failed');
  console.error(`api: ${startFailureLine(error)}`);
  process.exit(1);
}

const program = new Command('api').description('The HTTP service: webhooks and the orders API.');
// Before the subcommands, which inherit it: a usage error (such as a missing option) exits 2.
program.exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2));
program
  .command('serve', { isDefault: true })
  .description('serve HTTP (the default)')
  .action(() => serve().catch(fail));
const keys = program.command('keys').description('API keys: create, list, revoke');
keys
  .command('create')
  .description('create an API key for a tenant; prints it once, on the last line')
  .requiredOption('--tenant <id>', 'tenant ID: letters, digits, - or _ (e.g. acme-shop)')
  .option('--scopes <list>', `what the key may do, comma-separated: ${API_KEY_SCOPES.join(', ')}`, API_KEY_SCOPES.join(','))
  .option('--expires-in-days <n>', 'refuse the key (401 api_key_expired) this many days from now; default never', (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 3650) throw new InvalidArgumentError(`--expires-in-days must be a whole number of days from 1 to 3650, got '${value}'`);
    return Number(value);
  })
  .action((options: { tenant: string; scopes: string; expiresInDays?: number }) => createKey(options).catch(fail));
keys
  .command('list')
  .description("a tenant's keys: prefix, created_at and revoked_at (never the keys, which are not stored)")
  .requiredOption('--tenant <id>', 'tenant ID')
  .action((options: { tenant: string }) => listKeys(options.tenant).catch(fail));
keys
  .command('revoke')
  .description('revoke the key with this prefix: its next request gets 401 (exit 3 if no key has it)')
  .requiredOption('--prefix <opk_xxxxxx>', 'the prefix keys list shows')
  .action((options: { prefix: string }) => revokeKey(options.prefix).catch(fail));
program
  .command('reap')
  .description('delete expired Idempotency-Key records (keeping tombstones) and expired tombstones')
  .action(() => reapOnce().catch(fail));

program.parseAsync().catch(fail);
