// Test support: starts src/worker.ts as its own process on a harness's setup, optionally armed
// with failpoints where it SIGKILLs itself, and reports how it exited.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type { FailpointName } from '../../src/platform/failpoint.js';
import { STRIPE_TEST_KEY, type SagaHarness } from './saga-harness.js';
import { withTimeout } from './with-timeout.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER_ENTRY = 'src/worker.ts';
/** Two cores shared with other suites can make even a prebundled worker slow to start. */
const READY_TIMEOUT_MS = 120_000;
const OUTPUT_TAIL_CHARS = 6_000;

/** Every worker process started and not yet seen to exit, so a file's afterAll can stop them. */
const running = new Set<WorkerProcess>();

/** Stops every worker process still running: for afterAll, after a test that timed out mid-crash. */
export async function stopWorkerProcesses(): Promise<void> {
  await Promise.all([...running].map((worker) => worker.stop()));
}

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  readonly pid: number;
  /** Resolves when the process exits, however it exits. */
  readonly exited: Promise<WorkerExit>;
  /** Waits for the process to exit; fails with its output if it is still running after `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<WorkerExit>;
  /** Asks for a graceful shutdown (SIGTERM), then SIGKILLs it if it lingers; safe to call twice. */
  stop(): Promise<WorkerExit>;
  /** The end of what it wrote to stdout and stderr, for failure messages. */
  output(): string;
}

/**
 * Starts `src/worker.ts` as the operator would, a process of its own, pointed at the harness's
 * database, Stripe emulator and task queue. With `failpoints` it SIGKILLs itself at those
 * points: a crash the test can place exactly. Resolves once the worker reports it is polling.
 */
export async function startWorkerProcess(
  harness: SagaHarness,
  options: { failpoints?: FailpointName[]; env?: Record<string, string> } = {},
): Promise<WorkerProcess> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    // The worker's own login (migration 017): what a deployed worker connects as.
    DATABASE_URL: harness.db.serviceUrl('worker'),
    DATABASE_POOL_SIZE: '4',
    STRIPE_SECRET_KEY: STRIPE_TEST_KEY,
    STRIPE_API_BASE: harness.emulator.url,
    TEMPORAL_ADDRESS: harness.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: harness.taskQueue,
    WORKER_DEPLOYMENT_NAME: harness.deployment.deploymentName,
    WORKER_ROLLOUT: 'auto',
    // The bundle the run's global setup made from the same source: the worker skips a webpack
    // build of its own, as a production worker does.
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    FAILPOINTS: (options.failpoints ?? []).join(','),
    // Off unless a test asks: suites run side by side, and two workers cannot share port 9464.
    WORKER_METRICS_PORT: '0',
    ...options.env,
  };
  // node --import tsx, not the tsx binary: the PID we watch is the worker itself, so a SIGKILL
  // it sends itself is the signal we see, not a wrapper's exit code.
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn ${WORKER_ENTRY}`);

  let output = '';
  let ready = false;
  let markReady: () => void = () => undefined;
  const readyPromise = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4 * OUTPUT_TAIL_CHARS);
    if (!ready && output.includes('"msg":"worker started"')) {
      ready = true;
      markReady();
    }
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = exitOf(child);
  const tail = () => output.slice(-OUTPUT_TAIL_CHARS);

  const worker: WorkerProcess = {
    pid,
    exited,
    output: tail,
    waitForExit: (timeoutMs) =>
      withTimeout(exited, timeoutMs, () => `worker ${pid} still running after ${timeoutMs} ms; its output:\n${tail()}`),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        // The worker's shutdown grace is 30 s; past that it is not shutting down, it is stuck.
        const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      }
      return exited;
    },
  };
  running.add(worker);
  void exited.then(() => running.delete(worker));

  const startup = await Promise.race([
    readyPromise.then(() => 'ready' as const),
    exited.then((exit) => exit),
    delay(READY_TIMEOUT_MS).then(() => 'timeout' as const),
  ]);
  if (startup !== 'ready') {
    await worker.stop();
    const why = startup === 'timeout' ? `did not start within ${READY_TIMEOUT_MS} ms` : `exited (${describeExit(startup)}) before it started`;
    throw new Error(`worker ${pid} ${why}; its output:\n${tail()}`);
  }
  return worker;
}

export function describeExit(exit: WorkerExit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${String(exit.code)}`;
}

function exitOf(child: ChildProcess): Promise<WorkerExit> {
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
