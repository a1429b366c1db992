// The benchmark's load generator: keeps a number of runs going, back to back or paced per client,
// and records latencies; plus the percentile and median helpers.
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoadResult {
  completed: number;
  failed: number;
  /** First start to last completion. */
  elapsedMs: number;
  /** Start-to-result latency of each completed run, in milliseconds. */
  latenciesMs: number[];
  /** The most runs started and not yet finished at any moment. */
  peakInFlight: number;
  firstError: string | null;
}

/**
 * Keeps `concurrency` runs going until `total` have finished: each finished run starts the
 * next, as `concurrency` clients each placing one order after another would.
 *
 * With `cycleMs`, each client paces itself instead, as shoppers do: it starts a run at most once
 * per `cycleMs` (waiting out the rest of the cycle after a run that ended sooner), and the
 * clients' first starts are spread over one cycle. The offered load is then `concurrency /
 * cycleMs` runs per millisecond whatever the latency, so a latency is measured below the
 * machine's capacity, not as the queue that back-to-back clients build at it (Little's law:
 * at saturation every way of answering takes `concurrency / throughput`).
 */
export async function runClosedLoop(options: {
  concurrency: number;
  total: number;
  runOne: (index: number) => Promise<void>;
  cycleMs?: number;
}): Promise<LoadResult> {
  const result: LoadResult = { completed: 0, failed: 0, elapsedMs: 0, latenciesMs: [], peakInFlight: 0, firstError: null };
  let next = 0;
  let inFlight = 0;
  const started = performance.now();
  const cycleMs = options.cycleMs ?? 0;
  const lane = async (laneIndex: number) => {
    let nextStart = started + (cycleMs * laneIndex) / options.concurrency;
    while (next < options.total) {
      const wait = nextStart - performance.now();
      if (wait > 0) await sleep(wait);
      nextStart = Math.max(nextStart + cycleMs, performance.now());
      if (next >= options.total) break;
      const index = next++;
      inFlight += 1;
      result.peakInFlight = Math.max(result.peakInFlight, inFlight);
      const t0 = performance.now();
      try {
        await options.runOne(index);
        result.latenciesMs.push(performance.now() - t0);
        result.completed += 1;
      } catch (error) {
        result.failed += 1;
        result.firstError ??= error instanceof Error ? error.message : String(error);
      } finally {
        inFlight -= 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, options.total) }, (_, laneIndex) => lane(laneIndex)));
  result.elapsedMs = performance.now() - started;
  return result;
}

/** The median of the finite values (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Nearest-rank percentile of `values` (0 < p ≤ 100); NaN for no values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}
