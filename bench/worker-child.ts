// Starts bench-worker.ts as a process of its own for the benchmark, waits until it polls, and
// lists the running bench workers' PIDs for CPU measurement.
import { fileURLToPath } from 'node:url';
import { execaNode, type Result } from 'execa';
import type { WorkerReply, WorkerRequest, WorkerStats } from './worker-protocol.js';

const ENTRY = fileURLToPath(new URL('./bench-worker.ts', import.meta.url));
const READY_TIMEOUT_MS = 120_000;

export interface BenchWorker {
  readonly pid: number;
  stats(): Promise<WorkerStats>;
  stop(): Promise<void>;
}

/** Every bench worker process still running, so a CPU measurement can tell them from the rest. */
const running = new Set<number>();

/** The pids of the bench worker processes now running. */
export function benchWorkerPids(): number[] {
  return [...running];
}

/** Starts `bench-worker.ts` as a process of its own and resolves once it polls its task queue. */
export async function startBenchWorker(env: Record<string, string>, nodeFlags: string[] = []): Promise<BenchWorker> {
  const child = execaNode(ENTRY, [], {
    nodeOptions: ['--import', 'tsx', ...nodeFlags],
    env,
    ipc: true,
    stdout: 'inherit',
    stderr: 'inherit',
    reject: false,
  });
  const pending = new Map<number, (stats: WorkerStats) => void>();
  let nextId = 1;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  void (async () => {
    for await (const message of child.getEachMessage()) {
      const reply = message as WorkerReply;
      if (reply.type === 'ready') markReady();
      else {
        const { type: _type, id, ...stats } = reply;
        pending.get(id)?.(stats);
        pending.delete(id);
      }
    }
  })().catch(() => undefined);

  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    ready,
    child.then((result) => {
      throw new Error(`the benchmark worker exited before it was ready (${describe(result)})`);
    }),
    new Promise((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`the benchmark worker was not ready after ${READY_TIMEOUT_MS / 1000} s`));
      }, READY_TIMEOUT_MS);
    }),
  ]).finally(() => {
    clearTimeout(timer);
  });

  if (child.pid !== undefined) running.add(child.pid);
  void child.finally(() => {
    if (child.pid !== undefined) running.delete(child.pid);
  });
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    stats() {
      const id = nextId++;
      return new Promise<WorkerStats>((resolve, reject) => {
        pending.set(id, resolve);
        child.sendMessage({ type: 'stats', id } satisfies WorkerRequest).catch(reject);
      });
    },
    // Idempotent: the bench stops workers itself and again in its cleanup.
    stop() {
      stopping ??= (async () => {
        if (child.connected) await child.sendMessage({ type: 'stop' } satisfies WorkerRequest).catch(() => undefined);
        const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await child;
        clearTimeout(timeout);
      })();
      return stopping;
    },
  };
}

function describe(result: Result): string {
  if (result.signal) return `signal ${result.signal}`;
  return `code ${String(result.exitCode)}`;
}
