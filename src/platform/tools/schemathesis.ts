// The pinned schemathesis API fuzzer from the project's virtualenv, installed from PyPI once.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { findOrInstall, PROJECT_VENV } from './project-venv.js';

/** The API fuzzer, pinned: `npm run fuzz:api` and the bounded run in `npm test` use this one. */
export const SCHEMATHESIS_PIN = 'schemathesis==4.32.5';
const VERSION = SCHEMATHESIS_PIN.split('==')[1] ?? '';

function findSchemathesis(): string {
  const binary = process.env.SCHEMATHESIS_BIN?.trim() || path.join(PROJECT_VENV, 'bin', 'schemathesis');
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  if (!version.includes(`version ${VERSION}`)) throw new Error(`${binary} is not ${SCHEMATHESIS_PIN}: ${version.trim()}`);
  return binary;
}

/** schemathesis from the project's virtualenv, installing the pinned release from PyPI once. */
export function ensureSchemathesis(say: (line: string) => void): Promise<string> {
  return findOrInstall({
    find: findSchemathesis,
    envVar: 'SCHEMATHESIS_BIN',
    pin: SCHEMATHESIS_PIN,
    requirements: 'schemathesis.txt',
    alternative: 'or install it yourself: pip install --require-hashes -r requirements/schemathesis.txt',
    say,
  });
}
