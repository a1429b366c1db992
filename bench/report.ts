// The shape of a `npm run bench` result file and the markdown table printed from it: throughput
// against the baseline, scale-out, in-flight memory, ledger, replay, outcome and telemetry costs.
import type { HotStatementPlan } from './hot-statements.js';
import type { LedgerMicroResult } from './ledger-micro.js';
import type { CpuBreakdown, CpuPart } from './machine-cpu.js';
import type { OutcomeComparison, OutcomeLatency, PaymentOutcomeBench } from './payment-outcome.js';
import type { ReplayProof } from './replay-proof.js';
import type { RoundTrips } from './round-trips.js';
import type { SeedSummary } from './scale-seed.js';

/** The saga and its two no-op references: `baseline` of the saga's old shape (fixed), `baseline-new` of its current one. */
export type Workload = 'baseline' | 'baseline-new' | 'saga';

export interface LevelResult {
  workload: Workload;
  concurrency: number;
  orders: number;
  failed: number;
  elapsedMs: number;
  ordersPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number };
  workerPeakRssMb: number;
  /** CPU time of the worker process (every thread) per completed order. */
  workerCpuMsPerOrder: number;
  /** Every process's CPU per order while the level ran, and how busy the machine was. */
  machineCpu: CpuBreakdown;
  /** Each round's throughput, in the order the rounds ran. */
  roundsOrdersPerSecond: number[];
  /** Per completed order. `serverTransactions` is pg_stat_database's xact_commit delta. */
  postgres: { serverTransactions: number; clientTransactions: number; roundTrips: number };
}

export interface InFlightResult {
  /** The command the worker was started with, as a person would type it. */
  worker: string;
  started: number;
  peakInFlight: number;
  completed: number;
  failed: number;
  elapsedMs: number;
  /** RSS of the fresh worker's process tree once it polls, before the sagas start. */
  workerIdleRssMb: number;
  workerPeakRssMb: number;
  /** Over every round: total CPU over total orders. */
  workerCpuMsPerOrder: number;
  /** Each fresh start's own figures, in the order they ran (absent in files before 2026-12-06). */
  rounds?: { peakRssMb: number; cpuMsPerOrder: number }[];
  /**
   * The tuned start only: its CPU per order over the untuned start's, round by round (paired in
   * the order they ran) and their median, which the target reads (absent in files before 8435e92).
   */
  cpuOverUntuned?: { median: number; rounds: number[] };
  /** The command line of every process in the worker's tree (the launcher, then node). */
  processes: string[];
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean;
}

export interface BenchResult {
  schema: 'order-payments-bench/1';
  startedAt: string;
  commit: string;
  plan: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; os: string; node: string; postgres: string; temporalCli: string };
  /** 1, 5 and 15 minute load averages, as `uptime` prints them: other work on the machine shows here. */
  loadAverage: { before: number[]; after: number[] };
  workerSettings: Record<string, number | string>;
  levels: LevelResult[];
  /**
   * Saga throughput over baseline throughput, per concurrency level: the median of each round's
   * ratio, the rounds' ratios, the ratio the whole machine's CPU per order predicts (baseline
   * over saga), and how busy the machine was while each ran.
   */
  overhead: {
    concurrency: number;
    sagaOverBaseline: number;
    roundRatios: number[];
    cpuPredictedRatio: number;
    machineBusy: { baseline: number; saga: number };
  }[];
  best: { baseline: { concurrency: number; ordersPerSecond: number }; saga: { concurrency: number; ordersPerSecond: number }; sagaOverBaseline: number };
  /** One worker process against two on one task queue, at one concurrency. */
  scaleOut: ScaleOutResult;
  inFlight: InFlightResult[];
  ledger: LedgerMicroResult;
  replay: ReplayProof;
  paymentOutcome: PaymentOutcomeBench;
  /** The saga with the worker's Prometheus metrics and traces (the stack's local trace store) on, against off. */
  telemetry: TelemetryCost;
  /** The saga with its payloads encrypted (the codec) against unencrypted, at the same concurrency. */
  encryption: EncryptionCost;
  /** With --scale: the saga and the ledger on a database of that many finished orders; else null. */
  scale: ScaleResult | null;
  targets: Target[];
  /** What one order cost the Temporal server, per saga path and per workload (absent in files before issue 36). */
  roundTrips?: RoundTrips;
  durationSeconds: number;
}

export interface ScaleOutSide {
  workers: number;
  ordersPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Both workers' CPU per order, for two. */
  workersCpuMsPerOrder: number;
  /** Every process's. */
  machineCpuMsPerOrder: number;
  machineBusy: number;
}

export interface ScaleOutResult {
  concurrency: number;
  one: ScaleOutSide;
  two: ScaleOutSide;
  /** Throughput with two worker processes over one. */
  twoOverOne: number;
}

export interface ScaleSagaSide {
  ordersPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  workerCpuMsPerOrder: number;
  postgresCpuMsPerOrder: number;
  machineCpuMsPerOrder: number;
  machineBusy: number;
}

export interface ScaleResult {
  seed: SeedSummary;
  /** The saga at 64 on the seeded database. */
  saga: ScaleSagaSide;
  /** The saga at 64 on an empty database, in rounds alternating with `saga`'s, on a worker of its own. */
  empty: ScaleSagaSide;
  emptySagaOrdersPerSecond: number;
  /** The median of the rounds' full-over-empty throughput ratios. */
  sagaOverEmpty: number;
  roundRatios: number[];
  /** The empty database's whole-machine CPU per order over the full one's: the ratio the CPU predicts. */
  cpuPredictedRatio: number;
  ledger: LedgerMicroResult;
  /** Idempotent posting's first write on the full database over the empty one's (time per operation). */
  ledgerFirstWriteOverEmpty: number;
  plans: HotStatementPlan[];
}

export interface TelemetrySide {
  ordersPerSecond: number;
  p50Ms: number;
  workerCpuMsPerOrder: number;
  /** Every process's CPU per order (bench/machine-cpu.ts). */
  machineCpuMsPerOrder: number;
  machineBusy: number;
}

export interface EncryptionCost {
  concurrency: number;
  off: EncryptionSide;
  on: EncryptionSide;
  /** Throughput encrypted over unencrypted: the median of the alternating rounds' ratios. */
  onOverOff: number;
  roundRatios: number[];
  /** The unencrypted side's whole-machine CPU per order over the encrypted side's (absent in files before it was measured). */
  cpuPredictedRatio?: number;
}

export interface EncryptionSide {
  ordersPerSecond: number;
  p50Ms: number;
  workerCpuMsPerOrder: number;
  /** The whole machine's CPU per order, and by process (absent in files before it was measured). */
  machineCpuMsPerOrder?: number;
  machineCpu?: Record<CpuPart, number>;
  machineBusy?: number;
}

export interface TelemetryCost {
  concurrency: number;
  off: TelemetrySide;
  on: TelemetrySide & { spansPerOrder: number };
  /** Throughput on over off: the median of the rounds' ratios. */
  onOverOff: number;
  roundRatios: number[];
  /** The whole machine's CPU per order, off over on. */
  cpuPredictedRatio: number;
}

/** A figure for a table: fixed digits, or a dash for none (NaN, or not measured). */
export const fixed = (value: number | undefined, digits = 1) => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));

export function markdownReport(result: BenchResult): string {
  const lines: string[] = [];
  const m = result.machine;
  lines.push(
    `### Benchmark ${result.startedAt.slice(0, 10)} @ ${result.commit} (${result.plan})`,
    '',
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.os}; Node ${m.node}; ${m.postgres}; Temporal CLI ${m.temporalCli} (dev server).`,
    `Load average before ${result.loadAverage.before.map((v) => fixed(v, 2)).join(' ')}, after ${result.loadAverage.after.map((v) => fixed(v, 2)).join(' ')}.`,
    '',
    '| workload | concurrency | orders | orders/s | p50 ms | p95 ms | p99 ms | worker RSS MB | worker CPU ms/order | PG xacts/order | round trips/order | saga/baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const level of result.levels) {
    const ratio = result.overhead.find((o) => o.concurrency === level.concurrency)?.sagaOverBaseline;
    lines.push(
      `| ${level.workload} | ${level.concurrency} | ${level.orders}${level.failed > 0 ? ` (${level.failed} failed)` : ''} | ${fixed(level.ordersPerSecond)} | ${fixed(level.latencyMs.p50, 0)} | ${fixed(level.latencyMs.p95, 0)} | ${fixed(level.latencyMs.p99, 0)} | ${fixed(level.workerPeakRssMb, 0)} | ${fixed(level.workerCpuMsPerOrder)} | ${fixed(level.postgres.serverTransactions)} | ${fixed(level.postgres.roundTrips)} | ${level.workload === 'saga' && ratio !== undefined ? `${fixed(ratio * 100, 0)}%` : ''} |`,
    );
  }
  lines.push(
    '',
    'Where the machine\'s CPU went, ms per order (all processes from /proc; "bench" is the load generator with the in-process Stripe emulator):',
    '',
    '| workload | concurrency | worker | other workers | Temporal server | PostgreSQL | bench | other | total | machine busy | saga/baseline predicted by CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...result.levels.map((level) => {
      const c = level.machineCpu;
      const predicted = result.overhead.find((o) => o.concurrency === level.concurrency)?.cpuPredictedRatio;
      return `| ${level.workload} | ${level.concurrency} | ${fixed(c.msPerOrder.worker)} | ${fixed(c.msPerOrder.otherWorkers)} | ${fixed(c.msPerOrder.temporal)} | ${fixed(c.msPerOrder.postgres)} | ${fixed(c.msPerOrder.bench)} | ${fixed(c.msPerOrder.other)} | ${fixed(c.totalMsPerOrder)} | ${fixed(c.machineBusy * 100, 0)}% | ${level.workload === 'saga' && predicted !== undefined ? `${fixed(predicted * 100, 0)}%` : ''} |`;
    }),
  );
  const l = result.ledger;
  const r = result.replay;
  lines.push(
    '',
    `Best: saga ${fixed(result.best.saga.ordersPerSecond)}/s at ${result.best.saga.concurrency}, baseline ${fixed(result.best.baseline.ordersPerSecond)}/s at ${result.best.baseline.concurrency}: saga at ${fixed(result.best.sagaOverBaseline * 100, 0)}% of the ceiling.`,
    ...result.inFlight.map(
      (f) =>
        `In flight (${f.worker}): ${f.started} sagas started at once, peak ${f.peakInFlight} in flight; worker RSS ${fixed(f.workerIdleRssMb, 0)} MB before, ${fixed(f.workerPeakRssMb, 0)} MB peak; worker CPU ${fixed(f.workerCpuMsPerOrder)} ms/order${f.cpuOverUntuned ? ` (${fixed(f.cpuOverUntuned.median * 100, 1)}% of the untuned start's, median of rounds ${f.cpuOverUntuned.rounds.map((ratio) => fixed(ratio * 100, 0)).join('/')})` : ''}; all done in ${fixed(f.elapsedMs / 1000)} s${f.failed > 0 ? `, ${f.failed} failed` : ''}.`,
    ),
    '',
    '| ledger operation | µs/op | round trips/op | vs plain insert |',
    '| --- | ---: | ---: | ---: |',
    `| plain INSERT (no idempotency) | ${fixed(l.plainInsert.microseconds, 0)} | ${fixed(l.plainInsert.roundTrips)} | 1.00× |`,
    `| idempotent posting, first write | ${fixed(l.idempotentFirstWrite.microseconds, 0)} | ${fixed(l.idempotentFirstWrite.roundTrips)} | ${fixed(l.firstWriteOverPlain, 2)}× |`,
    `| idempotent posting, replay of a posted key | ${fixed(l.replayOfCompletedKey.microseconds, 0)} | ${fixed(l.replayOfCompletedKey.roundTrips)} | ${fixed(l.replayOverPlain, 2)}× |`,
    '',
    ...outcomeLines(result.paymentOutcome),
    '',
    `Scale out at ${result.scaleOut.concurrency}: ${scaleOutLine(result.scaleOut.one)}; ${scaleOutLine(result.scaleOut.two)}: ${fixed(result.scaleOut.twoOverOne, 2)}× the throughput.`,
    ...(result.scale
      ? [
          '',
          `At scale (${result.scale.seed.orders.toLocaleString('en-US')} finished orders seeded in ${fixed(result.scale.seed.elapsedMs / 1000, 0)} s, database ${fixed(result.scale.seed.databaseBytes / 1024 ** 3, 2)} GB): saga at 64 ${fixed(result.scale.saga.ordersPerSecond)} orders/s vs ${fixed(result.scale.emptySagaOrdersPerSecond)} on an empty database (${fixed(result.scale.sagaOverEmpty * 100, 0)}%, median of alternating rounds ${result.scale.roundRatios.map((r) => fixed(r * 100, 0)).join('/')}), p50 ${fixed(result.scale.saga.p50Ms, 0)} vs ${fixed(result.scale.empty.p50Ms, 0)} ms; PostgreSQL ${fixed(result.scale.saga.postgresCpuMsPerOrder)} vs ${fixed(result.scale.empty.postgresCpuMsPerOrder)} ms CPU per order, the whole machine ${fixed(result.scale.saga.machineCpuMsPerOrder)} vs ${fixed(result.scale.empty.machineCpuMsPerOrder)} ms (predicts ${fixed(result.scale.cpuPredictedRatio * 100, 0)}%); idempotent posting ${fixed(result.scale.ledger.idempotentFirstWrite.microseconds, 0)} µs (${fixed(result.scale.ledgerFirstWriteOverEmpty, 2)}× empty), replay of a posted key ${fixed(result.scale.ledger.replayOfCompletedKey.microseconds, 0)} µs; hot statements on an index: ${result.scale.plans.filter((plan) => plan.indexOnly).length} of ${result.scale.plans.length}.`,
        ]
      : []),
    '',
    `Telemetry at concurrency ${result.telemetry.concurrency}: metrics and traces off ${fixed(result.telemetry.off.ordersPerSecond)} orders/s (p50 ${fixed(result.telemetry.off.p50Ms, 0)} ms, ${fixed(result.telemetry.off.workerCpuMsPerOrder)} ms CPU/order); on ${fixed(result.telemetry.on.ordersPerSecond)} orders/s (p50 ${fixed(result.telemetry.on.p50Ms, 0)} ms, ${fixed(result.telemetry.on.workerCpuMsPerOrder)} ms CPU/order, ${fixed(result.telemetry.on.spansPerOrder)} spans/order): ${fixed(result.telemetry.onOverOff * 100, 1)}% of off (median of rounds ${result.telemetry.roundRatios.map((ratio) => fixed(ratio * 100, 0)).join('/')}); whole machine ${fixed(result.telemetry.on.machineCpuMsPerOrder)} vs ${fixed(result.telemetry.off.machineCpuMsPerOrder)} ms CPU/order (${fixed(result.telemetry.cpuPredictedRatio * 100, 1)}% predicted).`,
    '',
    `Capture replay (completed key, ${r.replay.replays} calls): ${fixed(r.replay.stripeRequests, 2)} Stripe requests, ${fixed(r.replay.roundTrips)} statements (${r.replay.statements.map((s) => `\`${s.slice(0, 60)}${s.length > 60 ? '…' : ''}\``).join(', ')}), ${r.replay.microseconds} µs; first call: ${fixed(r.firstCall.stripeRequests, 0)} Stripe request, ${fixed(r.firstCall.roundTrips, 0)} statements. Key read plan: ${r.keyReadPlan}.`,
    '',
    '| target | goal | measured | met |',
    '| --- | --- | --- | --- |',
    ...result.targets.map((t) => `| ${t.name} | ${t.goal} | ${t.measured} | ${t.met ? 'yes' : 'no'} |`),
  );
  return lines.join('\n');
}

function scaleOutLine(side: ScaleOutSide): string {
  return `${side.workers} worker process${side.workers === 1 ? '' : 'es'} ${fixed(side.ordersPerSecond)} orders/s (p50 ${fixed(side.p50Ms, 0)} ms, worker CPU ${fixed(side.workersCpuMsPerOrder)} ms/order, whole machine ${fixed(side.machineCpuMsPerOrder)} ms/order, ${fixed(side.machineBusy * 100, 0)}% busy)`;
}

/** The payment-outcome comparison, one line per load: the paced one the target is for, and back to back. */
function outcomeLines(outcome: PaymentOutcomeBench): string[] {
  const way = (latency: OutcomeLatency) => `p50 ${fixed(latency.p50Ms, 0)} ms, p99 ${fixed(latency.p99Ms, 0)} ms, ${fixed(latency.requestsPerOrder, 2)} requests/order`;
  const line = (label: string, comparison: OutcomeComparison) =>
    `Time to the payment outcome at ${outcome.concurrency} clients, ${label} (${outcome.orders} checkouts each way): one call (Update-with-Start) ${way(comparison.updateWithStart)}; start then poll GET every ${outcome.pollIntervalMs} ms ${way(comparison.startThenPoll)}: ${fixed(comparison.p50Speedup, 2)}× sooner.`;
  return [
    line(`paced at ${fixed(outcome.paced.offeredPerSecond ?? 0)} checkouts/s (half the saga's throughput at 16)`, outcome.paced),
    '',
    line('back to back (the worker saturated: both wait in its queue)', outcome.backToBack),
  ];
}
