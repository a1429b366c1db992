/**
 * The emulator's command line, started as a developer starts it (through npm, in its own process
 * group): it listens, installs --fault rules, logs one line per request and stops on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/** Where each launcher runs: the package's own `npm start`, and the repository's `npm run stripe-emulator`. */
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const LAUNCHERS = [
  { name: 'npm start (the package)', cwd: packageRoot, script: 'start' },
  { name: 'npm run stripe-emulator (the repository root)', cwd: repoRoot, script: 'stripe-emulator' },
];

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Collects the child's stdout lines and lets a test wait for one that matches. */
function lines(child: ChildProcess) {
  const seen: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  if (!child.stdout) throw new Error('no stdout');
  createInterface({ input: child.stdout }).on('line', (line) => {
    seen.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.match(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    seen,
    next(match: (line: string) => boolean, timeoutMs = 30_000): Promise<string> {
      const found = seen.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`no matching line within ${timeoutMs}ms; saw:\n${seen.join('\n')}`));
        }, timeoutMs);
        waiters.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

let child: ChildProcess | undefined;

afterEach(async () => {
  if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    // The whole group this test started: npm, its shell and the emulator.
    process.kill(-child.pid, 'SIGKILL');
    await once(child, 'exit');
  }
  child = undefined;
});

describe.each(LAUNCHERS)('$name', ({ cwd, script }) => {
  it('listens on the given port and logs one line per request', async () => {
    const port = await freePort();
    const fault = JSON.stringify({ kind: 'latency', latencyMs: 1, path: '/v1/refunds', count: 3 });
    child = spawn('npm', ['run', '--silent', script, '--', '--port', String(port), '--fault', fault], {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const output = lines(child);
    const started = await output.next((line) => line.includes('stripe emulator listening'));
    expect(started).toContain(`http://127.0.0.1:${port}`);
    const faults = (await (await fetch(`http://127.0.0.1:${port}/_emulator/faults`)).json()) as { data: unknown[] };
    expect(faults.data).toEqual([expect.objectContaining({ kind: 'latency', path: '/v1/refunds', remaining: 3 })]);

    const response = await fetch(`http://127.0.0.1:${port}/v1/payment_intents`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk_test_cli',
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': 'cli-key-1',
      },
      body: 'amount=1000&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never',
    });
    expect(response.status).toBe(200);

    const logged = JSON.parse(await output.next((line) => line.includes('"path":"/v1/payment_intents"'))) as Record<string, unknown>;
    expect(logged).toMatchObject({
      method: 'POST',
      path: '/v1/payment_intents',
      status: 200,
      idempotencyKey: 'cli-key-1',
      replayed: false,
      msg: 'POST /v1/payment_intents 200 key=cli-key-1 replayed=false',
    });

    if (child.pid === undefined) throw new Error('no pid');
    process.kill(-child.pid, 'SIGTERM');
    // 'close', not 'exit': npm can exit on the signal before the emulator has finished closing its
    // server; 'close' waits until every process holding the stdout pipe (the emulator too) is gone.
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    expect(code === 0 || signal === 'SIGTERM').toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/_emulator/health`)).rejects.toThrow();
  });
});
