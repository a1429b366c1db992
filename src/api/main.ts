import { Client, Connection } from '@temporalio/client';
import { ConfigError } from '../config/config-error.js';
import { loadAll, loadApiSettings, loadDatabaseSettings, loadStripeWebhookSettings } from '../config/settings.js';
import { createPool } from '../db/pool.js';
import { createLogger } from '../logging/logger.js';
import { loadTemporalConnectConfig } from '../temporal/connection-config.js';
import { temporalSignaller } from '../webhooks/workflow-handoff.js';
import { buildApiServer } from './server.js';

const logger = createLogger('api');

/**
 * `npm run api`: the HTTP service. Env: API_PORT (default 3000), API_HOST (default 127.0.0.1),
 * DATABASE_URL, STRIPE_WEBHOOK_SECRET (whsec_...), STRIPE_WEBHOOK_TOLERANCE_SECONDS (default
 * 300), and Temporal's TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE. Bad configuration exits 2 before
 * anything starts.
 */
async function main(): Promise<void> {
  const settings = loadAll({
    api: loadApiSettings,
    database: loadDatabaseSettings,
    webhook: loadStripeWebhookSettings,
    connect: loadTemporalConnectConfig,
  });
  const db = createPool({ connectionString: settings.database.url, max: settings.database.poolSize, applicationName: 'order-payments-api' });
  const connection = await Connection.connect(settings.connect.connectionOptions);
  const client = new Client({ connection, namespace: settings.connect.namespace });
  const app = await buildApiServer({
    db,
    signalPaymentEvent: temporalSignaller(client),
    stripeWebhook: settings.webhook,
    logger,
  });

  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'api stopping: finishing requests and hand-offs');
    // close() waits for in-flight requests and the hand-offs already started.
    app
      .close()
      .then(() => Promise.all([db.end(), connection.close()]))
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
  logger.info({ address, temporalNamespace: settings.connect.namespace }, `api listening on ${address}`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`api: ${error.message}`);
    process.exit(2);
  }
  logger.fatal({ err: error }, 'api failed to start');
  process.exit(1);
});
