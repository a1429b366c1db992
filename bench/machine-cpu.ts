/**
 * Where the machine's CPU went during a measurement: every process's user + system time from
 * /proc, grouped by the part of the system it is (the worker measured, the other bench workers,
 * the Temporal server, PostgreSQL, the bench process itself with its load generator and its
 * in-process Stripe emulator, and everything else), and the machine's busy fraction from
 * /proc/stat. The bench uses it to say what holds the saga below the baseline: when the machine
 * is busy all the time, throughput is cores ÷ CPU per order, and the ratio of two workloads'
 * throughput is the inverse ratio of their whole-machine CPU per order.
 *
 * Linux only (it reads /proc); elsewhere every snapshot is empty and the breakdown reads zero.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { CLOCK_TICKS_PER_SECOND, readProcesses } from './proc.js';

export type CpuPart = 'worker' | 'otherWorkers' | 'temporal' | 'postgres' | 'bench' | 'other';

export const CPU_PARTS: readonly CpuPart[] = ['worker', 'otherWorkers', 'temporal', 'postgres', 'bench', 'other'];

export interface CpuSnapshot {
  /** Clock ticks of CPU each process (all its threads) has used, by pid, with its part. */
  processes: Map<number, { part: CpuPart; ticks: number }>;
  /** /proc/stat's first line: every CPU's ticks, and the idle and iowait ones among them. */
  machine: { total: number; idle: number };
}

export interface CpuBreakdown {
  /** Milliseconds of CPU per completed order, by part. */
  msPerOrder: Record<CpuPart, number>;
  /** The sum over every part. */
  totalMsPerOrder: number;
  /** Of the machine's CPU time in the interval, the fraction that was not idle (0–1). */
  machineBusy: number;
}

/**
 * Reads every process's CPU time now. `workerPid` is the worker being measured; `workerPids`
 * are every bench worker (the others count as `otherWorkers`, so a second worker scaling out is
 * seen).
 */
export async function snapshotCpu(workerPid: number, workerPids: readonly number[] = []): Promise<CpuSnapshot> {
  const processes = new Map<number, { part: CpuPart; ticks: number }>();
  if (os.platform() !== 'linux') return { processes, machine: { total: 0, idle: 0 } };
  const workers = new Set(workerPids);
  for (const info of await readProcesses()) {
    const part: CpuPart =
      info.pid === workerPid
        ? 'worker'
        : workers.has(info.pid)
          ? 'otherWorkers'
          : info.pid === process.pid
            ? 'bench'
            : /(^|\/)temporal server\b/.test(info.cmdline)
              ? 'temporal'
              : info.comm === 'postgres' || info.cmdline.startsWith('postgres')
                ? 'postgres'
                : 'other';
    processes.set(info.pid, { part, ticks: info.cpuTicks });
  }
  return { processes, machine: await readMachine() };
}

/** CPU per order by part between two snapshots. A process that started in between counts from zero. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot, orders: number): CpuBreakdown {
  const ticks: Record<CpuPart, number> = { worker: 0, otherWorkers: 0, temporal: 0, postgres: 0, bench: 0, other: 0 };
  for (const [pid, now] of after.processes) {
    const then = before.processes.get(pid)?.ticks ?? 0;
    ticks[now.part] += Math.max(0, now.ticks - then);
  }
  const perOrder = (value: number) => (orders > 0 ? ((value / CLOCK_TICKS_PER_SECOND) * 1000) / orders : Number.NaN);
  const msPerOrder = Object.fromEntries(CPU_PARTS.map((part) => [part, round(perOrder(ticks[part]))])) as Record<CpuPart, number>;
  const total = after.machine.total - before.machine.total;
  const idle = after.machine.idle - before.machine.idle;
  return {
    msPerOrder,
    totalMsPerOrder: round(CPU_PARTS.reduce((sum, part) => sum + msPerOrder[part], 0)),
    machineBusy: total > 0 ? round(1 - idle / total, 3) : Number.NaN,
  };
}

/** The mean of several breakdowns, weighted by their orders (what one long interval would have read). */
export function combineCpu(samples: readonly { cpu: CpuBreakdown; orders: number }[]): CpuBreakdown {
  const orders = samples.reduce((sum, sample) => sum + sample.orders, 0);
  const weighted = (pick: (cpu: CpuBreakdown) => number) =>
    orders > 0 ? round(samples.reduce((sum, sample) => sum + pick(sample.cpu) * sample.orders, 0) / orders) : Number.NaN;
  return {
    msPerOrder: Object.fromEntries(CPU_PARTS.map((part) => [part, weighted((cpu) => cpu.msPerOrder[part])])) as Record<CpuPart, number>,
    totalMsPerOrder: weighted((cpu) => cpu.totalMsPerOrder),
    machineBusy: orders > 0 ? round(samples.reduce((sum, sample) => sum + sample.cpu.machineBusy * sample.orders, 0) / orders, 3) : Number.NaN,
  };
}

async function readMachine(): Promise<{ total: number; idle: number }> {
  const first = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  const values = first.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  return { total, idle: (values[3] ?? 0) + (values[4] ?? 0) };
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
