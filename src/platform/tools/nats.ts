// Finds a JetStream broker (NATS_URL, the local one, or the pinned nats-server started here) for
// the stack and the soak.
import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Authenticator } from '@nats-io/transport-node';
import { jetStreamAvailable } from '../../messaging/nats/nats-connection.js';
import { natsServerArgs } from '../../messaging/nats/nats-server-path.js';
import { DEFAULT_NATS_URL } from '../../messaging/nats/nats-settings.js';
import { spawnManaged, type ManagedProcess } from '../../operations/stack/child-process.js';
import { assertPortFree } from '../../operations/stack/ports.js';
import { BootstrapError } from './bootstrap-error.js';
import { ensureNatsServer } from './pinned-tools.js';

export interface FindNatsOptions {
  /** `NATS_URL` from the environment, used as it is when set. */
  natsUrl: string | undefined;
  /** The machine's own broker, used when JetStream answers there. Default nats://127.0.0.1:4222. */
  localUrl?: string;
  /** Where the server of our own listens when one has to be started. */
  port: number;
  storeDir: string;
  logFile: string;
  portHint: string;
  say: (line: string) => void;
  /**
   * For a server started here: writes its configuration file (credentials, accounts) for this
   * port and store, and answers the file and the credentials the readiness probe connects with.
   * Absent: the server runs without credentials (the test run's own broker).
   */
  configure?: (listen: { host: string; port: number; storeDir: string }) => Promise<{ configFile: string; probe: Authenticator }>;
}

export interface NatsBroker {
  url: string;
  /** external: NATS_URL; local: the server already on 127.0.0.1:4222; started: our own. */
  kind: 'external' | 'local' | 'started';
  process: ManagedProcess | null;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;

/**
 * A JetStream broker: `NATS_URL` if set, else the server already listening on 127.0.0.1:4222 if
 * JetStream answers there, else the pinned `nats-server` (installed into .tools/venv if missing)
 * started on `port` with JetStream, keeping its streams in `storeDir`.
 */
export async function findNats(options: FindNatsOptions): Promise<NatsBroker> {
  const noStop = () => Promise.resolve();
  if (options.natsUrl) return { url: options.natsUrl, kind: 'external', process: null, stop: noStop };
  const localUrl = options.localUrl ?? DEFAULT_NATS_URL;
  if (await jetStreamAvailable(localUrl)) return { url: localUrl, kind: 'local', process: null, stop: noStop };

  await assertPortFree(options.port, 'NATS', options.portHint);
  const binary = await ensureNatsServer(options.say);
  await mkdir(options.storeDir, { recursive: true, mode: 0o700 });
  const url = `nats://127.0.0.1:${options.port}`;
  const configured = options.configure ? await options.configure({ host: '127.0.0.1', port: options.port, storeDir: options.storeDir }) : null;
  const server = spawnManaged({
    name: 'nats-server',
    file: binary,
    args: configured ? ['-c', configured.configFile] : natsServerArgs({ port: options.port, storeDir: options.storeDir }),
    logFile: options.logFile,
  });
  const early: { how: string | null } = { how: null };
  void server.exited.then((how) => {
    early.how = how;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await jetStreamAvailable(url, 1_000, configured?.probe))) {
    if (early.how !== null || Date.now() > deadline) {
      await server.stop();
      throw new BootstrapError(`${early.how ?? `nats-server did not answer on ${url} within ${READY_TIMEOUT_MS / 1000} s`}; see ${options.logFile}`);
    }
    await sleep(200);
  }
  return { url, kind: 'started', process: server, stop: () => server.stop() };
}
