/**
 * Finding promtool for the alert rules test (src/platform/tools/promtool.ts): PROMTOOL_PATH, else the
 * system path, else Debian's prometheus package installed once with the server kept off, else
 * one line naming the command. apt-get and the paths are injected; the policy-rc.d guard runs
 * on a file of its own here, never the machine's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withServiceStartsDenied } from '../../src/platform/tools/debian-tool.js';
import { ensurePromtool } from '../../src/platform/tools/promtool.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'promtool-lookup-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const refuseApt = () => Promise.reject(new Error('apt-get must not run'));

/** The exit status of running `file` as policy-rc.d is run: `<initscript> <action>`. */
function policyAnswer(file: string): number {
  try {
    execFileSync(file, ['prometheus', 'start'], { stdio: 'pipe' });
    return 0;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe('finding promtool for the alert rules test', () => {
  it('takes PROMTOOL_PATH first, and refuses one that is not there', async () => {
    await expect(ensurePromtool({ env: { PROMTOOL_PATH: '/bin/true' }, aptGet: refuseApt, say: () => undefined })).resolves.toBe('/bin/true');
    await expect(ensurePromtool({ env: { PROMTOOL_PATH: path.join(dir, 'none') }, say: () => undefined })).rejects.toThrow(
      /^PROMTOOL_PATH=.* is not an executable file: point it at a promtool binary, or unset it$/,
    );
  });

  it('takes the system one when there is one, without installing anything', async () => {
    const binary = path.join(dir, 'system-promtool');
    await writeFile(binary, '#!/bin/sh\n');
    await chmod(binary, 0o755);
    const lines: string[] = [];
    await expect(ensurePromtool({ env: {}, systemPaths: [binary], canInstall: true, aptGet: refuseApt, say: (line) => lines.push(line) })).resolves.toBe(binary);
    expect(lines).toEqual([]);
  });

  it("installs Debian's prometheus without its recommends when it may, saying so in one line", async () => {
    const binary = path.join(dir, 'promtool');
    const lines: string[] = [];
    const calls: string[][] = [];
    const found = await ensurePromtool({
      env: {},
      systemPaths: [binary],
      canInstall: true,
      aptGet: async (args) => {
        calls.push(args);
        if (args[0] === 'install') {
          await writeFile(binary, '#!/bin/sh\n');
          await chmod(binary, 0o755);
        }
      },
      say: (line) => lines.push(line),
    });
    expect(found).toBe(binary);
    expect(lines).toEqual(["installing Debian's prometheus for promtool (once)"]);
    expect(calls).toEqual([
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', 'prometheus'],
    ]);
  });

  it('stops with one line when apt-get fails, or installs no promtool', async () => {
    const failing = ensurePromtool({
      env: {},
      systemPaths: [path.join(dir, 'never')],
      canInstall: true,
      aptGet: (args) => (args[0] === 'install' ? Promise.reject(new Error('E: Unable to locate package prometheus\nmore')) : Promise.resolve()),
      say: () => undefined,
    });
    await expect(failing).rejects.toThrow(
      /^could not install Debian's prometheus \(E: Unable to locate package prometheus\): run 'apt-get install --no-install-recommends prometheus', or set PROMTOOL_PATH$/,
    );
    const empty = ensurePromtool({ env: {}, systemPaths: [path.join(dir, 'never')], canInstall: true, aptGet: () => Promise.resolve(), say: () => undefined });
    await expect(empty).rejects.toThrow(/^apt-get installed prometheus but there is no .*never: set PROMTOOL_PATH to its binary$/);
  });

  it('otherwise stops with one line that names the command to run', async () => {
    const attempt = ensurePromtool({ env: {}, systemPaths: [path.join(dir, 'missing')], canInstall: false, aptGet: refuseApt, say: () => undefined });
    await expect(attempt).rejects.toThrow(
      /^no promtool for the alert rules test: install it \(Debian: sudo apt-get install --no-install-recommends prometheus\), or set PROMTOOL_PATH to a promtool binary$/,
    );
  });
});

describe("keeping a package's server from starting while it installs", () => {
  it('denies every start through a policy-rc.d of its own, and removes it afterwards, also when the install fails', async () => {
    const policy = path.join(dir, 'policy-rc.d');
    const during = await withServiceStartsDenied(() => Promise.resolve(policyAnswer(policy)), policy);
    expect(during).toBe(101);
    expect(existsSync(policy)).toBe(false);
    await expect(withServiceStartsDenied(() => Promise.reject(new Error('dpkg failed')), policy)).rejects.toThrow('dpkg failed');
    expect(existsSync(policy)).toBe(false);
  });

  it("leaves the machine's own policy-rc.d as it is", async () => {
    const policy = path.join(dir, 'own-policy-rc.d');
    const own = '#!/bin/sh\nexit 0\n';
    await writeFile(policy, own, { mode: 0o755 });
    const during = await withServiceStartsDenied(() => Promise.resolve(policyAnswer(policy)), policy);
    expect(during).toBe(0);
    expect(await readFile(policy, 'utf8')).toBe(own);
  });
});
