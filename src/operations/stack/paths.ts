// Where the local stack runs from and keeps its files: the project root, the .data directory, and
// each part's logs and data inside it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout the stack runs from: the worker is started from its sources. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Default home of everything the local stack keeps between runs (gitignored). */
export const DEFAULT_DATA_DIR = path.join(PROJECT_ROOT, '.data');

/** Where, inside the data directory, each part of the stack keeps its files. */
export function stackFiles(dataDir: string) {
  return {
    /** Written while a stack runs; lets `npm run demo` find and reuse it. */
    stateFile: path.join(dataDir, 'stack.json'),
    /** The Temporal dev server's SQLite store: runs survive a restart of the stack. */
    temporalDatabase: path.join(dataDir, 'temporal.sqlite'),
    temporalLog: path.join(dataDir, 'logs', 'temporal.log'),
    workerLog: path.join(dataDir, 'logs', 'worker.log'),
    postgresLog: path.join(dataDir, 'logs', 'postgres.log'),
    apiLog: path.join(dataDir, 'logs', 'api.log'),
    codecServerLog: path.join(dataDir, 'logs', 'codec-server.log'),
    outboxLog: path.join(dataDir, 'logs', 'outbox-dispatcher.log'),
    receiptsLog: path.join(dataDir, 'logs', 'receipts.log'),
    natsLog: path.join(dataDir, 'logs', 'nats.log'),
    /** The local trace store: the worker's and the API's spans, one JSON line each, for `npm run trace`. */
    traces: path.join(dataDir, 'traces.jsonl'),
    /** The stack's own NATS server's JetStream store, when it runs one. */
    natsData: path.join(dataDir, 'nats'),
    natsStreamId: path.join(dataDir, 'nats-stream-id'),
    /** The stack's own NATS server's configuration and each service's nkey seed (0700; files 0600). */
    natsCredentials: path.join(dataDir, 'nats-credentials'),
    /** The embedded PostgreSQL superuser's generated password (0600). */
    postgresPassword: path.join(dataDir, 'postgres-password'),
    /** The embedded PostgreSQL cluster, when the stack runs one and not as root. */
    postgresData: path.join(dataDir, 'postgres'),
  };
}
