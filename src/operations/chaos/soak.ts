// The soak (issue 16, part 4): the chaos run (src/operations/chaos/chaos-run.ts) at a steady offered load for
// many minutes, with the outbox dispatcher, the receipts consumer and the retention reaper running,
// sampled at intervals for worker memory, outbox lag, throughput and table sizes, and judged
// against four targets. `npm run soak` (soak-cli.ts) is its command line; a test runs it tiny.
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { Registry, type Gauge } from 'prom-client';
import { connectNats } from '../../messaging/nats/nats-connection.js';
import { reaperScheduleId, reconciliationScheduleId } from '../retention/schedules.js';
import { loadRetentionSettings } from '../retention/settings.js';
import type { ManagedProcess } from '../stack/child-process.js';
import { findFreePort } from '../stack/ports.js';
import { startServiceProcess } from '../stack/service-process.js';
import { createOutboxMetrics } from '../../platform/telemetry/messaging-metrics.js';
import { findNats } from '../../platform/tools/nats.js';
import { runChaos, type ChaosReport, type ChaosRunContext } from './chaos-run.js';
import { countSoakTables, REAPED_SOAK_TABLES, type SoakTable } from './soak-tables.js';
import { workerCommand, type WorkerCode } from './worker-fleet.js';

/** The worker slot that is never killed: its memory over the run is what the RSS target judges. */
const LONG_LIVED_SLOT = 0;
const MB = 1024 * 1024;

export interface SoakOptions {
  /** Offer orders for at least this long (fractions allowed)... */
  minutes: number;
  /** ...and at least this many orders, whichever takes longer at `ratePerSecond`. */
  orders: number;
  /** The steady offered load. */
  ratePerSecond: number;
  seed: number;
  /** Between samples. Default 60 s. */
  sampleEveryMs?: number;
  /** RSS is compared with the first sample at or after this. Default a fifth of the load phase, at most 3 minutes. */
  warmupMs?: number;
  /**
   * Every retention horizon, for this run only (RETENTION_SOAK_HORIZON_SECONDS; the reaper then
   * runs every fifth of it). Default a sixth of the load phase, between 60 and 300 s.
   */
  retentionSeconds?: number;
  /** The outbox lag target. Default 30 s. */
  maxLagSeconds?: number;
  /** How far above its warm-up value the long-lived worker's RSS may end. Default 0.15. */
  rssTolerance?: number;
  /** The pause between worker kills, [min, max] ms. Default 10 to 20 s. */
  killEveryMs?: [number, number];
  drainSeconds?: number;
  temporal?: { address: string; cli: string } | undefined;
  workflowBundlePath?: string | undefined;
  /**
   * The code the workers run. Default `build`: the compiled dist/ through the production launcher,
   * with its memory defaults, so the RSS target judges the worker that ships (`npm run build`
   * first; `npm run soak` does). `source`: tsx on src/, as developers run it.
   */
  workerCode?: WorkerCode;
  keep?: boolean;
  say?: (line: string) => void;
}

export interface SoakSample {
  /** Seconds since the first order was offered. */
  atSeconds: number;
  /** `load`: orders are being offered and faults strike; `drain`: after; `final`: every order ended and the outbox emptied. */
  phase: 'load' | 'drain' | 'final';
  /** Σ VmRSS over the worker processes alive at the sample. */
  workerRssMb: number;
  /** The long-lived (never killed) worker's VmRSS, and its PID. */
  longLivedRssMb: number | null;
  longLivedPid: number | null;
  workerProcesses: number;
  /** The outbox dispatcher's and the receipts consumer's VmRSS. */
  servicesRssMb: number;
  /** Age of the oldest unsent outbox row (order_payments_outbox_lag_seconds), and how many are unsent. */
  outboxLagSeconds: number;
  outboxUnsent: number;
  ordersOffered: number;
  ordersEnded: number;
  /** Orders that ended since the previous sample, per second. */
  ordersPerSecond: number;
  rows: Record<SoakTable, number>;
}

export interface SoakVerdict {
  target: string;
  /** null: the run was too short, or lacked the data, to judge it. */
  met: boolean | null;
  measured: string;
}

export interface SoakSummary {
  options: {
    minutes: number;
    ordersAtLeast: number;
    orders: number;
    ratePerSecond: number;
    seed: number;
    sampleEveryMs: number;
    warmupMs: number;
    retentionSeconds: number;
    reapEverySeconds: number;
    maxLagSeconds: number;
    rssTolerance: number;
    killEveryMs: [number, number];
    /** The command each worker ran (workerCommand). */
    worker: string;
    drainSeconds: number;
  };
  /** Seconds orders were offered for, and the whole run. */
  seconds: { load: number; total: number };
  samples: SoakSample[];
  verdicts: { violations: SoakVerdict; workerRss: SoakVerdict; outboxLag: SoakVerdict; tables: SoakVerdict };
  /** What the chaos run reported, without its per-reset and per-violation lists. */
  chaos: Omit<ChaosReport, 'resets' | 'violations' | 'unfinished'> & { unfinished: number; violations: ChaosReport['violations'] };
  ok: boolean;
}

/** The soak's defaults, from the load phase's length: shared by the function and its command line. */
export function soakPlan(options: Pick<SoakOptions, 'minutes' | 'orders' | 'ratePerSecond' | 'warmupMs' | 'retentionSeconds'>) {
  const orders = Math.max(options.orders, Math.ceil(options.minutes * 60 * options.ratePerSecond));
  const loadSeconds = Math.ceil(orders / options.ratePerSecond);
  const retentionSeconds = options.retentionSeconds ?? Math.min(300, Math.max(60, Math.round(loadSeconds / 6)));
  const reapEveryMs = loadRetentionSettings({ RETENTION_SOAK_HORIZON_SECONDS: String(retentionSeconds) }).reapEveryMs;
  const warmupMs = options.warmupMs ?? Math.min(180_000, Math.round((loadSeconds * 1000) / 5));
  return { orders, loadSeconds, retentionSeconds, reapEveryMs, warmupMs };
}

/**
 * Runs the soak and judges it: 0 violations (and every order ended); the long-lived worker's RSS
 * at the end of the load at most `rssTolerance` above its value after warm-up; the outbox lag
 * never above `maxLagSeconds`; and each reaped table level over the second half of the load.
 */
export async function runSoak(options: SoakOptions): Promise<SoakSummary> {
  const say = options.say ?? (() => undefined);
  const plan = soakPlan(options);
  const sampleEveryMs = options.sampleEveryMs ?? 60_000;
  const maxLagSeconds = options.maxLagSeconds ?? 30;
  const rssTolerance = options.rssTolerance ?? 0.15;
  const killEveryMs = options.killEveryMs ?? [10_000, 20_000];
  const drainSeconds = options.drainSeconds ?? 150;
  const workerCode = options.workerCode ?? 'build';
  const samples: SoakSample[] = [];

  say(
    `${plan.orders} orders at ${options.ratePerSecond}/s (${plan.loadSeconds} s of load), retention horizons ${plan.retentionSeconds} s ` +
      `(reaper every ${plan.reapEveryMs / 1000} s), a sample every ${sampleEveryMs / 1000} s; workers: ${workerCommand(workerCode).shown}`,
  );
  const report = await runChaos({
    orders: plan.orders,
    durationSeconds: plan.loadSeconds,
    ratePerSecond: options.ratePerSecond,
    seed: options.seed,
    drainSeconds,
    workers: 2,
    killEveryMs,
    spareSlots: [LONG_LIVED_SLOT],
    workerEnv: { RETENTION_SOAK_HORIZON_SECONDS: String(plan.retentionSeconds) },
    workerCode,
    label: 'soak',
    temporal: options.temporal,
    workflowBundlePath: options.workflowBundlePath,
    keep: options.keep ?? false,
    say,
    onRunning: (run) => startAlongside(run, { say, sampleEveryMs, loadMs: plan.loadSeconds * 1000, samples }),
  });

  const verdicts = judge(samples, report, { ...plan, maxLagSeconds, rssTolerance });
  const { resets: _resets, violations, unfinished, ...rest } = report;
  return {
    options: {
      minutes: options.minutes,
      ordersAtLeast: options.orders,
      orders: plan.orders,
      ratePerSecond: options.ratePerSecond,
      seed: options.seed,
      sampleEveryMs,
      warmupMs: plan.warmupMs,
      retentionSeconds: plan.retentionSeconds,
      reapEverySeconds: plan.reapEveryMs / 1000,
      maxLagSeconds,
      rssTolerance,
      killEveryMs,
      drainSeconds,
      worker: workerCommand(workerCode).shown,
    },
    seconds: { load: plan.loadSeconds, total: report.seconds.total },
    samples,
    verdicts,
    chaos: { ...rest, unfinished: unfinished.length, violations },
    ok: Object.values(verdicts).every((verdict) => verdict.met !== false) && verdicts.violations.met === true,
  };
}

/**
 * Starts what runs beside the workers for the soak (a NATS broker if none is found, the outbox
 * dispatcher, the receipts consumer) and the sampler. Its stop takes the last samples once the
 * outbox has emptied, then stops the services and removes the run's stream and schedules.
 */
async function startAlongside(
  run: ChaosRunContext,
  options: { say: (line: string) => void; sampleEveryMs: number; loadMs: number; samples: SoakSample[] },
): Promise<{ stop(): Promise<void> }> {
  const { say, samples } = options;
  const nats = await findNats({
    natsUrl: process.env.NATS_URL?.trim() || undefined,
    port: await findFreePort(),
    storeDir: path.join(run.logDir, 'nats'),
    logFile: path.join(run.logDir, 'nats.log'),
    portHint: 'set NATS_URL to a broker with JetStream',
    say,
  });
  const suffix = run.taskQueue.replace(/[^A-Za-z0-9]/g, '_');
  const stream = { OUTBOX_STREAM: `ORDERS_${suffix}`, OUTBOX_SUBJECT_PREFIX: `orders_${suffix}` };
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.tmpdir(),
    DATABASE_URL: run.database.url,
    NATS_URL: nats.url,
    ...stream,
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
  };
  const services: ManagedProcess[] = [];
  const stopServices = async () => {
    await Promise.all(services.splice(0).map((service) => service.stop()));
    const nc = await connectNats({ url: nats.url, name: 'soak-cleanup' }).catch(() => null);
    if (nc) {
      await (await jetstreamManager(nc)).streams.delete(stream.OUTBOX_STREAM).catch(() => false);
      await nc.close();
    }
    await nats.stop();
  };
  try {
    say(`starting the outbox dispatcher and the receipts consumer (stream ${stream.OUTBOX_STREAM} on ${nats.url})`);
    for (const [name, entry, readyMessage, log] of [
      ['the outbox dispatcher', 'src/outbox-dispatcher.ts', 'outbox dispatcher started', 'outbox-dispatcher.log'],
      ['the receipts consumer', 'src/receipts.ts', 'receipts consumer started', 'receipts.log'],
    ] as const) {
      services.push(await startServiceProcess({ name, entry, env, logFile: path.join(run.logDir, log), readyMessage, say }));
    }
  } catch (error) {
    await stopServices();
    throw error;
  }
  const servicePids = services.map((service) => service.pid);

  // The dispatcher's own lag gauge, read from the table: the figure an operator's dashboard shows.
  const outboxMetrics = createOutboxMetrics(run.database.pool, new Registry(), { processMetrics: false });
  const gauge = (name: string) => outboxMetrics.registry.getSingleMetric(name) as Gauge | undefined;
  const gaugeValue = async (name: string) => (await gauge(name)?.get())?.values[0]?.value ?? 0;

  // runChaos offers the first order as this returns, and faults (and orders) for loadMs from it.
  const firstOrderAt = Date.now();
  const loadEnd = firstOrderAt + options.loadMs;
  let previous = { at: firstOrderAt, ended: 0 };
  const take = async (phase: SoakSample['phase']): Promise<void> => {
    const now = Date.now();
    const processes = run.fleet.processes();
    const [rss, serviceRss, lag, unsent, rows] = await Promise.all([
      Promise.all(processes.map(async (worker) => ({ ...worker, rss: await rssBytes(worker.pid) }))),
      Promise.all(servicePids.map(rssBytes)),
      gaugeValue('order_payments_outbox_lag_seconds'),
      gaugeValue('order_payments_outbox_unsent_rows'),
      countSoakTables(run.database.pool),
    ]);
    const longLived = rss.find((worker) => worker.slot === LONG_LIVED_SLOT && worker.rss !== null);
    const ended = run.endings.size;
    samples.push({
      atSeconds: round1((now - firstOrderAt) / 1000),
      phase,
      workerRssMb: round1(rss.reduce((sum, worker) => sum + (worker.rss ?? 0), 0) / MB),
      longLivedRssMb: longLived?.rss === undefined || longLived.rss === null ? null : round1(longLived.rss / MB),
      longLivedPid: longLived?.pid ?? null,
      workerProcesses: rss.filter((worker) => worker.rss !== null).length,
      servicesRssMb: round1(serviceRss.reduce<number>((sum, value) => sum + (value ?? 0), 0) / MB),
      outboxLagSeconds: round1(lag),
      outboxUnsent: unsent,
      ordersOffered: run.started.size,
      ordersEnded: ended,
      ordersPerSecond: now > previous.at ? round1(((ended - previous.ended) * 1000) / (now - previous.at)) : 0,
      rows,
    });
    previous = { at: now, ended };
  };
  // Samples are taken one at a time; one that fails (a terminated connection) is skipped, and said.
  let chain = Promise.resolve();
  const sample = (phase: SoakSample['phase']) =>
    (chain = chain.then(() =>
      take(phase).catch((error: unknown) => {
        say(`a sample failed and was skipped: ${error instanceof Error ? error.message : String(error)}`);
      }),
    ));

  const stopping = new AbortController();
  const periodic = (async () => {
    let loadEndTaken = false;
    for (let k = 1; ; k++) {
      const next = firstOrderAt + k * options.sampleEveryMs;
      // One sample exactly at the end of the load: the RSS and table targets compare with it.
      if (!loadEndTaken && loadEnd <= next) {
        loadEndTaken = true;
        if (!(await wait(loadEnd - Date.now(), stopping.signal))) return;
        await sample('load');
        if (loadEnd === next) continue;
      }
      if (!(await wait(next - Date.now(), stopping.signal))) return;
      await sample(next <= loadEnd ? 'load' : 'drain');
    }
  })();

  let stopped: Promise<void> | null = null;
  return {
    stop: () =>
      (stopped ??= (async () => {
        stopping.abort();
        await periodic;
        await chain;
        // Every order has ended: what the dispatcher still holds is lag, and it should empty.
        const deadline = Date.now() + 60_000;
        while (Date.now() < deadline && (await gaugeValue('order_payments_outbox_unsent_rows').catch(() => 0)) > 0) await sleep(500);
        await sample('final');
        await stopServices();
        for (const id of [reaperScheduleId(run.taskQueue), reconciliationScheduleId(run.taskQueue)]) {
          await run.temporal.client.schedule.getHandle(id).delete().catch(() => undefined);
        }
      })()),
  };
}

/** The four targets, from the samples and the chaos run's report. */
function judge(
  samples: SoakSample[],
  report: ChaosReport,
  limits: { warmupMs: number; retentionSeconds: number; reapEveryMs: number; maxLagSeconds: number; rssTolerance: number },
): SoakSummary['verdicts'] {
  const load = samples.filter((sample) => sample.phase === 'load');
  const end = load.at(-1);

  const violations: SoakVerdict = {
    target: '0 violations of I1-I9, every order ended',
    met: report.violations.length === 0 && report.unfinished.length === 0,
    measured:
      `${report.violations.length} violations, ${report.unfinished.length} unfinished of ${report.options.orders}` +
      (report.workers.unexpectedExits > 0 ? `; ${report.workers.unexpectedExits} worker exits nobody caused` : ''),
  };

  const pct = Math.round(limits.rssTolerance * 100);
  const warm = load.find((sample) => sample.atSeconds * 1000 >= limits.warmupMs && sample.longLivedRssMb !== null);
  const workerRss: SoakVerdict = { target: `the long-lived worker's RSS at the end of the load within ${pct}% above its value after warm-up`, met: null, measured: '' };
  if (!warm || !end || end === warm || end.longLivedRssMb === null || warm.longLivedRssMb === null) {
    workerRss.measured = `needs a sample after the ${limits.warmupMs / 1000} s warm-up and a later one at the end of the load`;
  } else if (end.longLivedPid !== warm.longLivedPid) {
    workerRss.met = false;
    workerRss.measured = `the long-lived worker was replaced (PID ${String(warm.longLivedPid)} at ${warm.atSeconds} s, ${String(end.longLivedPid)} at ${end.atSeconds} s)`;
  } else {
    const change = (end.longLivedRssMb - warm.longLivedRssMb) / warm.longLivedRssMb;
    workerRss.met = change <= limits.rssTolerance;
    workerRss.measured = `${warm.longLivedRssMb} MB at ${warm.atSeconds} s, ${end.longLivedRssMb} MB at ${end.atSeconds} s (${change >= 0 ? '+' : ''}${Math.round(change * 1000) / 10}%)`;
  }

  const worst = samples.reduce<SoakSample | null>((max, sample) => (max === null || sample.outboxLagSeconds > max.outboxLagSeconds ? sample : max), null);
  const final = samples.find((sample) => sample.phase === 'final');
  const outboxLag: SoakVerdict = {
    target: `outbox lag at most ${limits.maxLagSeconds} s at every sample, and the outbox empty at the end`,
    met: worst === null || !final ? null : worst.outboxLagSeconds <= limits.maxLagSeconds && final.outboxUnsent === 0,
    measured: worst === null ? 'no samples' : `at most ${worst.outboxLagSeconds} s (at ${worst.atSeconds} s); ${final ? `${final.outboxUnsent} unsent at the end` : 'no final sample'}`,
  };

  // A reaped table levels off once the reaper has had a horizon and two sweeps to catch up. Level
  // means: at the end of the load it holds at most 30% more than at a sample in the load's second
  // half no later than 70% of it. A table that kept every row would have grown by 43% or more
  // between those two; one the reaper bounds only moves by a sweep's worth (a fifth of a horizon).
  const settledAt = limits.retentionSeconds + (2 * limits.reapEveryMs) / 1000;
  const tables: SoakVerdict = { target: 'each reaped table level (within 30%) over the second half of the load', met: null, measured: '' };
  const middle = end && load.find((sample) => sample.atSeconds >= Math.max(settledAt, end.atSeconds / 2));
  if (!end || !middle || middle.atSeconds > 0.7 * end.atSeconds) {
    tables.measured = `the load must last at least twice the ${settledAt} s the reaper needs to settle (horizon + two sweeps), with samples in between`;
  } else {
    const growth = REAPED_SOAK_TABLES.map((table) => ({ table, from: middle.rows[table], to: end.rows[table] }));
    tables.met = growth.every(({ from, to }) => to <= Math.max(from * 1.3, from + 10));
    tables.measured = growth.map(({ table, from, to }) => `${table} ${from} → ${to}`).join(', ') + ` (${middle.atSeconds} s → ${end.atSeconds} s)`;
  }
  return { violations, workerRss, outboxLag, tables };
}

/** VmRSS of a process in bytes, or null if it is gone (a worker killed between listing and reading). */
async function rssBytes(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/** Sleeps `ms`; false if `signal` aborts first. */
async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    await sleep(Math.max(0, ms), undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

const round1 = (value: number) => Math.round(value * 10) / 10;
