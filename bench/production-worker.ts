/**
 * The production worker's memory and CPU with many sagas in flight, measured on exactly the
 * command docs/operating.md gives operators: `NODE_ENV=production sh scripts/run.sh worker` (the
 * launcher execs plain node on the compiled dist/ with the worker's memory defaults, so the
 * process a supervisor starts is the worker itself, with no npm beside it), against the same
 * compiled worker started bare (`node dist/worker.js`: node's and glibc's own defaults).
 *
 * RSS and CPU are read from /proc for the whole process tree of the started process, so nothing
 * in the worker reports on itself.
 * bench.ts can call measureProductionWorker; `tsx bench/production-worker.ts` runs it alone:
 * it builds dist/, starts a Temporal dev server, a throwaway database and the Stripe emulator,
 * and compares the two starts in alternating rounds (Linux only: it reads /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { execa } from 'execa';
import type { OrderInput } from '../src/domain/order-input.js';
import type { OrderResult } from '../src/domain/order-result.js';
import type { Queryable } from '../src/platform/db/queryable.js';
import { setStock } from '../src/orders/stock.js';
import { findFreePort } from '../src/operations/stack/ports.js';
import { developmentKeyRingEnv } from '../src/platform/temporal/payload-encryption/key-ring.js';
import { orderStartOptions } from '../src/saga-client/start-order.js';
import { BUNDLE_FILES } from '../src/platform/temporal/bundle-workflows.js';
import { becomeCurrent } from '../src/operations/deploy/deployment-routing.js';
import { median, runClosedLoop } from './closed-loop.js';
import { CLOCK_TICKS_PER_SECOND, readProcesses, type ProcessInfo } from './proc.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MB = 1024 * 1024;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 40_000;
const OUTPUT_TAIL_CHARS = 4_000;
const SKUS = 64;

/**
 * `tuned`: `NODE_ENV=production sh scripts/run.sh worker`, the documented production start.
 * `untuned`: `NODE_ENV=production node dist/worker.js`, the same code with no memory defaults.
 */
export type ProductionWorkerVariant = 'tuned' | 'untuned';

export interface ProductionWorkerEnv {
  temporalAddress: string;
  taskQueue: string;
  databaseUrl: string;
  stripeApiBase: string;
  stripeSecretKey: string;
  /** More environment for the worker, e.g. NODE_OPTIONS or MALLOC_ARENA_MAX to try other settings. */
  extra?: Record<string, string>;
  /** Node flags for the bare start (`untuned` only), e.g. a --cpu-prof that NODE_OPTIONS refuses. */
  nodeFlags?: string[];
}


export interface StopOutcome {
  /** How the started process ended: 0 after a graceful shutdown. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Command lines of processes still running after the started one exited (then ended): none is right. */
  leftBehind: string[];
}

export interface ProductionWorker {
  readonly variant: ProductionWorkerVariant;
  /** The command as a person would type it. */
  readonly command: string;
  /** The process started: the launcher for `tuned`, which execs node in its place; node for `untuned`. */
  readonly pid: number;
  /** The started process and every descendant, as /proc shows them now. */
  tree(): Promise<ProcessInfo[]>;
  /** Stdout and stderr's last few thousand characters. */
  output(): string;
  /**
   * SIGTERM to the started process, as a supervisor stops it; SIGKILL for its whole group if it
   * lingers. Idempotent.
   */
  stop(): Promise<StopOutcome>;
}

/** Starts the compiled worker (npm run build must have run) and resolves once it logs that it polls. */
export async function startProductionWorker(variant: ProductionWorkerVariant, env: ProductionWorkerEnv): Promise<ProductionWorker> {
  const workerEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...(process.env.TMPDIR && { TMPDIR: process.env.TMPDIR }),
    NODE_ENV: 'production',
    // The development ring the bench's client uses, given as production requires keys to be.
    ...developmentKeyRingEnv(),
    DATABASE_URL: env.databaseUrl,
    STRIPE_API_BASE: env.stripeApiBase,
    STRIPE_SECRET_KEY: env.stripeSecretKey,
    TEMPORAL_ADDRESS: env.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: env.taskQueue,
    // A deployment per run; the operator's set-current is the measurement's (measureProductionWorker).
    WORKER_DEPLOYMENT_NAME: env.taskQueue,
    // Metrics stay on, as a production worker's are; on a port of its own so runs do not collide.
    WORKER_METRICS_PORT: String(await findFreePort()),
    ...env.extra,
  };
  const nodeFlags = variant === 'untuned' ? (env.nodeFlags ?? []) : [];
  const [file, args] = variant === 'tuned' ? ['sh', ['scripts/run.sh', 'worker']] : [process.execPath, [...nodeFlags, 'dist/worker.js']];
  // Its own process group, so a cleanup can end the tree it started and nothing else.
  const child = spawn(file, args, { cwd: ROOT, env: workerEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const settings = Object.entries(env.extra ?? {}).map(([key, value]) => `${key}=${/\s/.test(value) ? `'${value}'` : value} `);
  const command = `${settings.join('')}NODE_ENV=production ${variant === 'tuned' ? 'sh scripts/run.sh worker' : ['node', ...nodeFlags, 'dist/worker.js'].join(' ')}`;
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${command}: could not start`);
  let tail = '';
  let pending = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const onChunk = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-OUTPUT_TAIL_CHARS);
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    if (lines.some((line) => line.includes('"msg":"worker started"'))) markReady();
  };
  child.stdout.on('data', onChunk);
  child.stderr.on('data', onChunk);
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

  let stopping: Promise<StopOutcome> | undefined;
  const worker: ProductionWorker = {
    variant,
    command,
    pid,
    tree: () => processTree(pid),
    output: () => tail,
    stop() {
      stopping ??= stopTree(child, exited);
      return stopping;
    },
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ready,
      exited.then(() => {
        throw new Error(`${command} exited before it was ready:\n${tail}`);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`${command} was not polling after ${READY_TIMEOUT_MS / 1000} s:\n${tail}`));
        }, READY_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    await worker.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return worker;
}

async function stopTree(child: ChildProcess, exited: Promise<[number | null, NodeJS.Signals | null]>): Promise<StopOutcome> {
  const group = child.pid;
  if (group === undefined) return { code: child.exitCode, signal: child.signalCode, leftBehind: [] };
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => {
    killGroup(group, 'SIGKILL');
  }, STOP_TIMEOUT_MS);
  try {
    const [code, signal] = await exited;
    // The root has gone; a process it left behind (a launcher that did not pass the signal on)
    // would hold the output pipes open: it is named, then ended too.
    const leftBehind = (await readGroup(group)).map((info) => info.cmdline);
    if (leftBehind.length > 0) killGroup(group, 'SIGTERM');
    while (killGroup(group, 0)) await sleep(100);
    return { code, signal, leftBehind };
  } finally {
    clearTimeout(timer);
  }
}

/** Signals every process in the group; false when none is left. */
function killGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false;
  }
}

/** `pid` and its descendants, from /proc: each one's command line, RSS and CPU so far. */
export async function processTree(pid: number): Promise<ProcessInfo[]> {
  const all = await readProcesses();
  const tree: ProcessInfo[] = [];
  const wanted = new Set([pid]);
  // Parents come before their children often but not always: sweep until nothing is added.
  for (let added = true; added; ) {
    added = false;
    for (const info of all) {
      if (!tree.includes(info) && (info.pid === pid || wanted.has(info.ppid))) {
        tree.push(info);
        wanted.add(info.pid);
        added = true;
      }
    }
  }
  return tree;
}

/** The processes in a process group, wherever their parents went. */
async function readGroup(group: number): Promise<ProcessInfo[]> {
  return (await readProcesses()).filter((info) => info.pgrp === group);
}

export interface ProductionWorkerOptions extends Omit<ProductionWorkerEnv, 'taskQueue'> {
  variant: ProductionWorkerVariant;
  /** The client orders are started with, on the worker's Temporal server. */
  client: Client;
  /** The worker's database, for its stock rows. */
  db: Queryable;
  /** Names this run's task queue, orders and SKUs. */
  label: string;
  /** Sagas started at once. Default 1,000. */
  count?: number;
}

export interface ProductionWorkerResult {
  variant: ProductionWorkerVariant;
  command: string;
  started: number;
  completed: number;
  failed: number;
  firstError: string | null;
  peakInFlight: number;
  elapsedMs: number;
  /** The whole tree of the started process, idle after its start. */
  idleRssMb: number;
  /** The same tree at its peak while the sagas ran. */
  peakRssMb: number;
  /** CPU of the tree from the first start to the last completion, per completed order. */
  cpuMsPerOrder: number;
  /** The command line of every process in the tree: the worker alone, for both starts. */
  processes: string[];
  /** Processes still running once SIGTERM had ended the started one (see StopOutcome): none is right. */
  leftBehindAtStop: string[];
}

/**
 * Starts a fresh worker, then `count` sagas at once against it, sampling its process tree's RSS
 * every 250 ms and its CPU around the load, then stops it.
 */
export async function measureProductionWorker(options: ProductionWorkerOptions): Promise<ProductionWorkerResult> {
  const count = options.count ?? 1_000;
  const taskQueue = `production-worker-${options.label}`;
  const skus = Array.from({ length: SKUS }, (_, index) => `prod-${options.label}-${index}`);
  for (const sku of skus) await setStock(options.db, sku, count);
  const worker = await startProductionWorker(options.variant, { ...options, taskQueue });
  try {
    // A production worker polls without taking traffic until an operator makes its build current.
    const buildId = (await readFile(path.join(ROOT, 'dist', BUNDLE_FILES.buildId), 'utf8')).trim();
    await becomeCurrent(options.client, { deploymentName: taskQueue, buildId }, 'bench: npm run deploy -- set-current');
    const rss = (tree: ProcessInfo[]) => tree.reduce((sum, info) => sum + info.rssBytes, 0);
    const cpu = (tree: ProcessInfo[]) => tree.reduce((sum, info) => sum + info.cpuTicks, 0);

    const before = await worker.tree();
    let peak = before;
    const stopped = new AbortController();
    const sampler = (async () => {
      while (!stopped.signal.aborted) {
        const tree = await worker.tree();
        if (rss(tree) > rss(peak)) peak = tree;
        await sleep(250);
      }
    })();
    const load = await runClosedLoop({
      concurrency: count,
      total: count,
      runOne: async (index) => {
        const order: OrderInput = {
          orderId: `prod-${options.label}-${index}`,
          tenantId: 'default',
          customerId: 'cust-bench',
          amount: 2500,
          currency: 'usd',
          paymentMethod: 'pm_card_visa',
          sku: skus[index % SKUS] ?? '',
          quantity: 1,
        };
        const result = await options.client.workflow.execute<(order: OrderInput) => Promise<OrderResult>>(
          'orderPaymentSaga',
          orderStartOptions(taskQueue, order),
        );
        if (result.status !== 'completed') throw new Error(`order ${order.orderId} ended ${result.status}: ${result.reason ?? ''}`);
      },
    });
    const after = await worker.tree();
    stopped.abort();
    await sampler;
    if (rss(after) > rss(peak)) peak = after;
    const { leftBehind } = await worker.stop();
    return {
      variant: options.variant,
      command: worker.command,
      started: count,
      completed: load.completed,
      failed: load.failed,
      firstError: load.firstError,
      peakInFlight: load.peakInFlight,
      elapsedMs: Math.round(load.elapsedMs),
      idleRssMb: round(rss(before) / MB),
      peakRssMb: round(rss(peak) / MB),
      cpuMsPerOrder: round(((cpu(after) - cpu(before)) / CLOCK_TICKS_PER_SECOND) * 1000 / Math.max(1, load.completed)),
      processes: after.map((info) => info.cmdline),
      leftBehindAtStop: leftBehind,
    };
  } finally {
    await worker.stop();
  }
}

export interface ProductionWorkerComparisonOptions extends Omit<ProductionWorkerOptions, 'variant' | 'label'> {
  /** Which starts to measure; both unless one is asked for. */
  variants: readonly ProductionWorkerVariant[];
  /** Fresh starts of each, alternating which goes first. */
  rounds: number;
  /** Names this comparison's task queues, orders and SKUs. */
  label: string;
  /**
   * Sagas run on one discarded fresh start before the rounds (0: none). The first start after a
   * build paid for what every later one found warm (the page cache of dist/ and node_modules, the
   * Temporal server's and PostgreSQL's caches): 55 against 39 ms CPU per order at 577a08a.
   */
  warmUp: number;
  /** Called after each measured start. */
  onRound?: (round: number, result: ProductionWorkerResult) => void;
}

/** Each start's results, one per round, in the order they ran. */
export type ProductionWorkerRounds = Partial<Record<ProductionWorkerVariant, ProductionWorkerResult[]>>;

/**
 * The measured starts in alternating rounds (the first variant first in odd rounds, last in even
 * ones), after one discarded warm-up start: a single fresh start is one sample of the CPU per
 * order, which moved by ±10% between starts on two cores.
 */
export async function compareProductionWorkers(options: ProductionWorkerComparisonOptions): Promise<ProductionWorkerRounds> {
  const { variants, rounds, label, warmUp, onRound, extra, ...shared } = options;
  // Settings being tried apply to the tuned start; the untuned one stays node's and glibc's defaults.
  const start = (variant: ProductionWorkerVariant, startLabel: string, count = shared.count) =>
    measureProductionWorker({ ...shared, variant, label: startLabel, count, ...(variant === 'tuned' && { extra }) });
  const [first] = variants;
  if (first === undefined) throw new Error('compareProductionWorkers: no variant to measure');
  if (warmUp > 0) await start(first, `${label}-warmup`, warmUp);
  const results: ProductionWorkerRounds = {};
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const result = await start(variant, `${label}-${variant}-r${round}`);
      (results[variant] ??= []).push(result);
      onRound?.(round, result);
    }
  }
  return results;
}

/** The median of each round's tuned over untuned CPU per order (rounds paired in the order they ran). */
export function medianCpuRatio(tuned: ProductionWorkerResult[], untuned: ProductionWorkerResult[]): { median: number; rounds: number[] } {
  const ratios = tuned.map((result, index) => result.cpuMsPerOrder / (untuned[index]?.cpuMsPerOrder ?? Number.NaN));
  return { median: median(ratios), rounds: ratios };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** `tsx bench/production-worker.ts`: both starts, on services of its own, in alternating rounds. */
async function main(): Promise<void> {
  const flags = new Command('production-worker')
    .description('Peak RSS and CPU per order of NODE_ENV=production sh scripts/run.sh worker with many sagas in flight, against node dist/worker.js')
    .option('--count <n>', 'sagas started at once', (value) => Number(value), 1_000)
    .option('--rounds <n>', 'rounds of each start, alternating which goes first', (value) => Number(value), 3)
    .option('--warm-up <n>', 'sagas on one discarded fresh start before the rounds (0: none)', (value) => Number(value), 200)
    .option('--no-build', 'reuse dist/ instead of running npm run build')
    .option('--only <variant>', 'measure only tuned or untuned')
    .option('--env <KEY=VALUE>', "more environment for the tuned worker, to try other settings (NODE_OPTIONS='--max-semi-space-size=8'); repeatable", collect, [])
    .option('--write', 'also write bench/results/production-worker-<date>-<commit>.json', false)
    .parse()
    .opts<{ count: number; rounds: number; warmUp: number; build: boolean; only?: ProductionWorkerVariant; env: string[]; write: boolean }>();
  const extra = Object.fromEntries(flags.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  const say = (line: string) => process.stderr.write(`production-worker: ${line}\n`);
  const { ensureTemporalCli } = await import('../src/platform/tools/bootstrap.js');
  const { startDevServer } = await import('../src/operations/chaos/dev-server.js');
  const { createThrowawayDatabase } = await import('../src/operations/chaos/throwaway-database.js');
  const { startStripeEmulator } = await import('@order-payments/stripe-emulator');
  await ensureTemporalCli(say);
  if (flags.build) {
    say('npm run build');
    await execa('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'inherit' });
  }
  say('starting a Temporal dev server, a throwaway database and the Stripe emulator');
  const [server, db, emulator] = await Promise.all([
    startDevServer(),
    createThrowawayDatabase({ label: 'prodworker' }),
    startStripeEmulator({ port: 0 }),
  ]);
  try {
    const startedAt = new Date().toISOString();
    const results = await compareProductionWorkers({
      variants: (['untuned', 'tuned'] as const).filter((each) => flags.only === undefined || each === flags.only),
      rounds: flags.rounds,
      warmUp: flags.warmUp,
      label: Math.random().toString(16).slice(2, 8),
      client: server.client,
      db: db.pool,
      count: flags.count,
      temporalAddress: server.address,
      databaseUrl: db.url,
      stripeApiBase: emulator.url,
      stripeSecretKey: 'sk_test_order_payments_bench',
      extra,
      onRound: (round, result) =>
        say(
          `round ${round + 1}: ${result.command}: ${result.completed}/${result.started} completed, peak ${result.peakRssMb} MB RSS (idle ${result.idleRssMb}), ${result.cpuMsPerOrder} ms CPU per order`,
        ),
    });
    const ratio = results.tuned && results.untuned ? medianCpuRatio(results.tuned, results.untuned) : null;
    if (ratio) say(`tuned over untuned CPU per order: median ${(ratio.median * 100).toFixed(1)}% (rounds ${ratio.rounds.map((each) => (each * 100).toFixed(0)).join('/')})`);
    for (const [variant, rounds] of Object.entries(results)) {
      say(`${variant}: peak ${Math.max(...rounds.map((each) => each.peakRssMb))} MB RSS over ${rounds.length} round(s) (${rounds[0]?.command ?? ''})`);
    }
    if (flags.write) {
      const { checkoutCommit } = await import('../src/platform/build-info.js');
      const commit = checkoutCommit() ?? 'unknown';
      const file = path.join(ROOT, 'bench', 'results', `production-worker-${startedAt.slice(0, 10)}-${commit}.json`);
      const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(os.totalmem() / 1024 ** 3), node: process.version };
      const record = { startedAt, commit, machine, count: flags.count, warmUp: flags.warmUp, medianCpuRatio: ratio, results };
      await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
      say(`wrote ${path.relative(ROOT, file)}`);
    }
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await emulator.close();
    await db.drop();
    await server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main();
  process.exit(0);
}
