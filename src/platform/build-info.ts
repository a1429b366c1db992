// Which build a process runs, for its first log line and its build-info metric: BUILD_ID from the
// deploy pipeline, else the commit `npm run build` recorded, else the checkout's commit.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUNNING_FROM_DIST = import.meta.url.includes('/dist/');
/** Written by `npm run build` (this module, run directly): the commit dist/ was built from. */
export const BUILD_INFO_FILE = fileURLToPath(new URL('../../dist/build-info.json', import.meta.url));

/**
 * The build a service runs. `BUILD_ID` when the pipeline sets it; from dist/, the commit it was
 * built from; from a checkout, its commit (with `-dirty` for uncommitted changes); else `unknown`.
 * The worker reports its workflow build ID instead (worker-deployment.ts), which is what routes runs.
 */
export function releaseBuildId(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.BUILD_ID?.trim();
  if (fromEnv) return fromEnv;
  try {
    const recorded = JSON.parse(readFileSync(BUILD_INFO_FILE, 'utf8')) as { commit?: unknown };
    if (RUNNING_FROM_DIST && typeof recorded.commit === 'string' && recorded.commit !== '') return recorded.commit;
  } catch {
    // No build: running from source.
  }
  return checkoutCommit() ?? 'unknown';
}

/** The checkout's commit, `<sha>-dirty` with uncommitted changes; null outside a git checkout. */
export function checkoutCommit(): string | null {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim();
    const sha = git('rev-parse', '--short=12', 'HEAD');
    return git('status', '--porcelain', '--untracked-files=no') === '' ? sha : `${sha}-dirty`;
  } catch {
    return null;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const commit = checkoutCommit() ?? 'unknown';
  writeFileSync(BUILD_INFO_FILE, `${JSON.stringify({ commit, builtAt: new Date().toISOString() })}\n`);
  console.log(`build info written to ${BUILD_INFO_FILE}: commit ${commit}`);
}
