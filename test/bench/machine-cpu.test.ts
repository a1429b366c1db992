// The bench's whole-machine CPU accounting (bench/machine-cpu.ts), which the saga/baseline
// explanation rests on: a child process named as the worker is counted under `worker` with the
// CPU it reports for itself, this process under `bench`, and the machine's busy fraction is a
// fraction.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { cpuBetween, snapshotCpu } from '../../bench/machine-cpu.js';

/** Spins about `ms` of wall time, checking the clock only every so often (the check is a system call). */
function spin(ms: number): void {
  const until = Date.now() + ms;
  let x = 0;
  while (Date.now() < until) for (let i = 0; i < 100_000; i++) x += i;
  expect(x).toBeGreaterThan(0);
}

// Waits for "go", spins 300 ms, prints the CPU it used meanwhile (user + system, µs), then idles.
const CHILD = `
console.log('ready');
process.stdin.once('data', () => {
  const start = process.cpuUsage();
  const until = Date.now() + 300;
  let x = 0;
  while (Date.now() < until) for (let i = 0; i < 100000; i++) x += i;
  const used = process.cpuUsage(start);
  console.log(String(used.user + used.system));
  setInterval(() => x, 1000);
});`;

describe('machine CPU accounting', () => {
  it('counts a process named as the worker under worker, with the CPU it reports for itself, and this one under bench', async () => {
    const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      await once(child.stdout, 'data');
      const before = await snapshotCpu(child.pid ?? -1);
      const reported = once(child.stdout, 'data');
      child.stdin.write('go\n');
      spin(200);
      const childMicros = Number(String((await reported)[0]).trim());
      const after = await snapshotCpu(child.pid ?? -1);
      const breakdown = cpuBetween(before, after, 2);
      // Per order, of 2: the child's own figure halved, within a few 10 ms ticks (the reads, the wake-up).
      expect(childMicros).toBeGreaterThan(0);
      expect(Math.abs(breakdown.msPerOrder.worker - childMicros / 1000 / 2)).toBeLessThanOrEqual(25);
      expect(breakdown.msPerOrder.bench).toBeGreaterThan(0);
      expect(breakdown.totalMsPerOrder).toBeGreaterThanOrEqual(breakdown.msPerOrder.bench + breakdown.msPerOrder.worker - 0.2);
      expect(breakdown.machineBusy).toBeGreaterThan(0);
      expect(breakdown.machineBusy).toBeLessThanOrEqual(1);
    } finally {
      child.kill();
      await once(child, 'exit');
    }
  });

  it('reads no orders as no figure rather than a division by zero', async () => {
    const snapshot = await snapshotCpu(-1);
    expect(Number.isNaN(cpuBetween(snapshot, snapshot, 0).totalMsPerOrder)).toBe(true);
  });
});
