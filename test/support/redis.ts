// Test support: a redis-server of this test file's own, on a free port, that a test may stop and
// start again (a Redis outage on cue). The binary is the one the run's global setup found or
// installed (src/platform/tools/redis.ts); nothing on 6379 is needed or touched.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { spawnManaged, type ManagedProcess } from '../../src/operations/stack/child-process.js';
import { findFreePort } from '../../src/operations/stack/ports.js';

export interface TestRedis {
  url: string;
  /** A client of its own, for assertions. */
  client: Redis;
  /** Stops the server (SIGTERM): every command to it fails until start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestRedis(): Promise<TestRedis> {
  const binary = inject('redisServerPath');
  const port = await findFreePort();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'order-payments-test-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  let server: ManagedProcess | null = null;
  const start = async () => {
    server = spawnManaged({
      name: 'redis-server',
      file: binary,
      args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes'],
      logFile: path.join(dir, 'redis.log'),
    });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    for (let waited = 0; ; waited += 50) {
      try {
        await probe.connect();
        await probe.ping();
        break;
      } catch {
        if (waited > 10_000) throw new Error(`redis-server did not answer on ${url} within 10 s; see ${path.join(dir, 'redis.log')}`);
        await sleep(50);
      }
    }
    probe.disconnect();
  };
  await start();
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  return {
    url,
    client,
    async stop() {
      await server?.stop();
      server = null;
    },
    start,
    async close() {
      client.disconnect();
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
