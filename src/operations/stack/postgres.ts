// The stack's PostgreSQL: DATABASE_URL as given, else its own database on the local server, else
// an embedded server started here and kept between runs.
import { ensureDatabase, findPostgres, type PostgresServer } from '../../platform/tools/postgres.js';
import { PORT_HINTS } from './stack-options.js';

export { isReachable } from '../../platform/tools/postgres.js';

export interface RunningPostgres {
  /** The URL the worker and the demo connect with. */
  url: string;
  /** external: DATABASE_URL; local: the server on 127.0.0.1:5432; embedded: started here. Only embedded is stopped on stop. */
  kind: PostgresServer['kind'];
  /** The embedded cluster's data folder. */
  dataDir: string | null;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  databaseUrl: string | undefined;
  /** Always the embedded server, even when DATABASE_URL is set or 127.0.0.1:5432 answers. */
  embeddedOnly?: boolean;
  port: number;
  /** Data folder for the embedded cluster (as root only its name: see `startEmbeddedPostgres`). */
  embeddedDataDir: string;
  /** Where the embedded cluster's superuser password is kept (0600). */
  passwordFile?: string;
  logFile: string;
  say: (line: string) => void;
}

/** The database the stack keeps its orders in, on the local or the embedded server. */
const STACK_DATABASE = 'order_payments';

/**
 * DATABASE_URL as it is; else the stack's own database on the server at 127.0.0.1:5432 if it
 * answers, else on an embedded PostgreSQL started here and kept between runs.
 */
export async function startPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  const server = await findPostgres({
    url: options.databaseUrl,
    forceEmbedded: options.embeddedOnly ?? false,
    embedded: {
      port: options.port,
      dataDir: options.embeddedDataDir,
      logFile: options.logFile,
      persistent: true,
      ...(options.passwordFile && { passwordFile: options.passwordFile }),
      portHint: PORT_HINTS.postgres,
      say: options.say,
    },
  });
  if (server.kind === 'external') return { url: server.adminUrl, kind: 'external', dataDir: null, stop: () => server.stop() };
  try {
    const url = await ensureDatabase(server.adminUrl, STACK_DATABASE);
    return { url, kind: server.kind, dataDir: server.dataDir, stop: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
