// Proves the stack starts and stops its own JetStream server when none answers, and uses a stream
// of its own on a broker it shares.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetStreamAvailable } from '../../src/messaging/nats/nats-connection.js';
import { startNats } from '../../src/operations/stack/nats.js';
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
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/order_payments',
  logFile: path.join(dir, 'nats.log'),
  portHint: 'pick another',
  say: () => undefined,
});

describe('the stack finding NATS', () => {
  it('starts its own JetStream server when none answers, and stops it', async () => {
    const port = await findFreePort();
    const nats = await startNats({ ...options(port), localUrl: `nats://127.0.0.1:${await findFreePort()}` });
    try {
      expect(nats.kind).toBe('started');
      expect(nats.url).toBe(`nats://127.0.0.1:${port}`);
      expect(await jetStreamAvailable(nats.url)).toBe(true);
    } finally {
      await nats.stop();
    }
    expect(await jetStreamAvailable(nats.url, 500)).toBe(false);
  });

  it('on a broker it shares, uses a stream of its own that lasts as long as its data directory', async () => {
    const port = await findFreePort();
    const server = await startNats({ ...options(port), localUrl: `nats://127.0.0.1:${await findFreePort()}` });
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
