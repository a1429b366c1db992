// Proves the stack starts and stops its own JetStream server when none answers, with a key per
// service and nobody let in without one, and uses a stream of its own on a broker it shares.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetStreamAvailable } from '../../src/messaging/nats/nats-connection.js';
import { seedFileAuthenticator } from '../../src/messaging/nats/nats-credentials.js';
import { startNats } from '../../src/operations/stack/nats.js';
import { findNats } from '../../src/platform/tools/nats.js';
import { findFreePort } from '../../src/operations/stack/ports.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'stack-nats-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const options = (port: number) => ({
  natsUrl: undefined,
  port,
  storeDir: path.join(dir, 'nats'),
  streamIdFile: path.join(dir, 'nats-stream-id'),
  credentialsDir: path.join(dir, 'nats-credentials'),
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/order_payments',
  logFile: path.join(dir, 'nats.log'),
  portHint: 'pick another',
  say: () => undefined,
});

describe('the stack finding NATS', () => {
  it('starts its own JetStream server when none answers, lets in only the services’ keys (files 0600), and stops it', async () => {
    const port = await findFreePort();
    const nats = await startNats({ ...options(port), localUrl: `nats://127.0.0.1:${await findFreePort()}` });
    const mode = async (file: string) => ((await stat(file)).mode & 0o777).toString(8);
    try {
      expect(nats.kind).toBe('started');
      expect(nats.url).toBe(`nats://127.0.0.1:${port}`);
      if (!nats.seedFiles) throw new Error('a broker of the stack’s own has seed files');
      // Anonymous: refused. The dispatcher's key: in.
      expect(await jetStreamAvailable(nats.url)).toBe(false);
      expect(await jetStreamAvailable(nats.url, 2_000, await seedFileAuthenticator(nats.seedFiles.outboxDispatcher))).toBe(true);
      expect(await mode(path.join(dir, 'nats-credentials'))).toBe('700');
      for (const file of [nats.seedFiles.outboxDispatcher, nats.seedFiles.receipts, path.join(dir, 'nats-credentials', 'nats-server.conf')]) expect(await mode(file)).toBe('600');
      const config = await readFile(path.join(dir, 'nats-credentials', 'nats-server.conf'), 'utf8');
      expect(config).not.toContain((await readFile(nats.seedFiles.receipts, 'utf8')).trim());
    } finally {
      await nats.stop();
    }
    // Started again, it keeps the services' keys.
    const again = await startNats({ ...options(port), localUrl: `nats://127.0.0.1:${await findFreePort()}` });
    try {
      expect(again.seedFiles).toEqual(nats.seedFiles);
      expect(await jetStreamAvailable(again.url, 2_000, await seedFileAuthenticator(again.seedFiles?.receipts ?? ''))).toBe(true);
    } finally {
      await again.stop();
    }
    expect(await jetStreamAvailable(nats.url, 500, await seedFileAuthenticator(nats.seedFiles.outboxDispatcher))).toBe(false);
  });

  it('on a broker it shares, uses a stream of its own that lasts as long as its data directory', async () => {
    const port = await findFreePort();
    // A broker without credentials, as a developer's machine runs one.
    const server = await findNats({ ...options(port), localUrl: `nats://127.0.0.1:${await findFreePort()}`, storeDir: path.join(dir, 'shared-nats') });
    try {
      const first = await startNats({ ...options(port), localUrl: server.url });
      const again = await startNats({ ...options(port), natsUrl: server.url });
      expect(first.kind).toBe('local');
      expect(again.kind).toBe('external');
      expect(first.stream).not.toBe('ORDERS');
      expect(again.stream).toBe(first.stream);
      expect(first.stream).toContain((await readFile(path.join(dir, 'nats-stream-id'), 'utf8')).split(' ')[0]);
      // Another database numbers its outbox rows from 1 again: it must not share the stream.
      const otherDatabase = await startNats({ ...options(port), natsUrl: server.url, databaseUrl: 'postgres://postgres:postgres@127.0.0.1:54329/order_payments' });
      expect(otherDatabase.stream).not.toBe(first.stream);
    } finally {
      await server.stop();
    }
  });
});
