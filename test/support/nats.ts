// Test support for the message side: a JetStream stream and subjects unique to each test, polling
// helpers, free ports, and a NATS server of the test's own.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { jetstream, jetstreamManager, PubHeaders, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../src/messaging/nats/nats-connection.js';
import { DEFAULT_NATS_URL } from '../../src/messaging/nats/nats-settings.js';
import { natsServerArgs, resolveNatsServer } from '../../src/messaging/nats/nats-server-path.js';
import { ensureOrderEventsStream, type OrderEventsStream } from '../../src/messaging/nats/order-events-stream.js';

/** The broker the tests use: NATS_URL, else the one this machine runs. */
export const TEST_NATS_URL = process.env.NATS_URL ?? DEFAULT_NATS_URL;

export interface StoredMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  data: unknown;
}

export interface TestStream extends OrderEventsStream {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Every message the stream holds, in stream order. */
  storedMessages(): Promise<StoredMessage[]>;
  /** Deletes the stream and closes the connection. */
  close(): Promise<void>;
}

/**
 * A stream and subject space of its own (names unique per call), so test files running side by
 * side on one broker never see each other's events.
 */
export async function createTestStream(options: { url?: string; duplicateWindowMs?: number } = {}): Promise<TestStream> {
  const suffix = randomBytes(5).toString('hex');
  const config: OrderEventsStream = {
    stream: `ORDERS_TEST_${suffix}`,
    subjectPrefix: `test_${suffix}`,
    duplicateWindowMs: options.duplicateWindowMs ?? 120_000,
  };
  const nc = await connectNats({ url: options.url ?? TEST_NATS_URL, name: `test-${suffix}` });
  await ensureOrderEventsStream(nc, config);
  const jsm = await jetstreamManager(nc);
  return {
    ...config,
    nc,
    js: jetstream(nc),
    jsm,
    async storedMessages() {
      const { state } = await jsm.streams.info(config.stream);
      const messages: StoredMessage[] = [];
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq += 1) {
        const stored = await jsm.streams.getMessage(config.stream, { seq });
        if (!stored) continue;
        messages.push({ seq, subject: stored.subject, msgId: stored.header.get(PubHeaders.MsgIdHdr) || undefined, data: stored.json() });
      }
      return messages;
    },
    async close() {
      await jsm.streams.delete(config.stream).catch(() => undefined);
      await nc.close();
    },
  };
}

/** Polls `check` until it returns a value other than undefined; fails with `what` after the timeout. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  return address.port;
}

export interface OwnNatsServer {
  url: string;
  /** Kills the server (SIGKILL): the broker is down, its data stays in the store directory. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Kills it and removes its data. */
  dispose(): Promise<void>;
}

/**
 * A JetStream server of the test's own (the binary resolveNatsServer finds), so the test can
 * take the broker down and bring it back without touching the one other tests share.
 */
export async function startOwnNatsServer(): Promise<OwnNatsServer> {
  const binary = resolveNatsServer();
  const port = await freePort();
  const storeDir = await mkdtemp(path.join(os.tmpdir(), 'nats-test-'));
  let child: ChildProcess | null = null;

  async function start(): Promise<void> {
    const proc = spawn(binary, natsServerArgs({ port, storeDir }), { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`nats-server did not become ready:\n${output}`));
      }, 20_000);
      proc.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('Server is ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited (${String(code ?? signal)}) before it was ready:\n${output}`));
      });
    });
  }

  async function kill(): Promise<void> {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    kill,
    start,
    async dispose() {
      await kill();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
