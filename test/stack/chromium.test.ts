// Proves how the browser test finds Chromium: CHROMIUM_PATH first, else Debian's package when it
// may install it, else one line naming the command to run.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureChromium } from '../../src/platform/tools/chromium.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'chromium-lookup-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('finding Chromium for the browser test', () => {
  it('takes CHROMIUM_PATH first, and refuses one that is not there', async () => {
    await expect(ensureChromium({ env: { CHROMIUM_PATH: '/bin/true' }, say: () => undefined })).resolves.toBe('/bin/true');
    await expect(ensureChromium({ env: { CHROMIUM_PATH: path.join(dir, 'none') }, say: () => undefined })).rejects.toThrow(/CHROMIUM_PATH=.* is not an executable file/);
  });

  it("installs Debian's package when it may, saying so in one line", async () => {
    const binary = path.join(dir, 'chromium');
    const lines: string[] = [];
    const calls: string[][] = [];
    const found = await ensureChromium({
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
    expect(lines).toEqual(["installing Debian's chromium (once)"]);
    expect(calls.map((args) => args[0])).toEqual(['update', 'install']);
  });

  it('otherwise stops with one line that names the command to run', async () => {
    const attempt = ensureChromium({ env: {}, systemPaths: [path.join(dir, 'missing')], canInstall: false, say: () => undefined });
    await expect(attempt).rejects.toThrow(/^no Chromium for the browser test: install it \(Debian: sudo apt-get install chromium\), or set CHROMIUM_PATH/);
  });
});
