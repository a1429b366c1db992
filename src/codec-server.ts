// The codec server process (`npm run codec-server`): decodes and encodes payloads for the Temporal
// Web UI (--ui-codec-endpoint, or the UI's codec setting) and the CLI (--codec-endpoint), with the
// same keys as the workers. Exit codes: 0 stopped, 1 could not start, 2 bad configuration.
import { buildCodecServer } from './codec-server/server.js';
import { authenticatorFor } from './codec-server/caller-auth.js';
import { loadCodecServerSettings } from './codec-server/settings.js';
import { ConfigError } from './platform/config/config-error.js';
import { loadAll } from './platform/config/settings.js';
import { createLogger } from './platform/logger.js';
import { encryptionCodecFor } from './platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from './platform/temporal/payload-encryption/settings.js';
import { startFailureLine } from './platform/tools/bootstrap-error.js';

const logger = createLogger('codec-server');

async function main(): Promise<void> {
  const settings = loadAll({ server: loadCodecServerSettings, encryption: loadPayloadEncryptionSettings });
  const app = await buildCodecServer({
    codec: encryptionCodecFor(settings.encryption),
    authenticate: authenticatorFor(settings.server.auth),
    corsOrigins: settings.server.corsOrigins,
    bodyLimitBytes: settings.server.bodyLimitBytes,
    logger,
    tokenInPath: settings.server.auth.kind === 'static-token',
  });
  const address = await app.listen({ port: settings.server.port, host: settings.server.host });
  const shutdown = () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  logger.info(
    { address, auth: settings.server.auth.kind, corsOrigins: settings.server.corsOrigins, keys: `${settings.encryption.keys.describe()} (${settings.encryption.source})` },
    `codec server listening on ${address}`,
  );
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`codec-server: ${problem}`);
    process.exit(2);
  }
  console.error(`codec-server: ${startFailureLine(error)}`);
  process.exit(1);
});
