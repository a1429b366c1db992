// The bench's per-path cost reading (bench/round-trips.ts) against the real saga: each path's
// order ends as it should and its history reads as test/integration/history-cost.test.ts pins.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setStock } from '../../src/orders/stock.js';
import type { LevelResult } from '../../bench/report.js';
import { measurePathCosts, roundTripsReport, roundTripTargets, SAGA_PATHS, throughputRatios, type RoundTrips } from '../../bench/round-trips.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness();
});
afterAll(() => harness.close());

describe('npm run bench: what one order of each saga path costs the server', () => {
  it('runs every path on the saga worker and reads its cost from the history', async () => {
    const sku = `sku-paths-${randomUUID().slice(0, 8)}`;
    await setStock(harness.db.pool, sku, 10);
    const paths = await measurePathCosts({ client: harness.client, taskQueue: harness.taskQueue, emulator: harness.emulator, label: `paths-${randomUUID().slice(0, 8)}`, sku });

    expect(Object.fromEntries(Object.entries(paths).map(([path, cost]) => [path, [cost.events, cost.workflowTasks]]))).toEqual({
      completed: [21, 3],
      'completed, one call': [23, 3],
      declined: [21, 3],
      'out of stock': [11, 1],
      'cancelled before capture': [35, 5],
      'cancelled after capture': [41, 6],
    });
  });
});

describe('npm run bench: the saga against the no-op workflows of its old and new shapes', () => {
  const level = (workload: 'baseline' | 'baseline-new' | 'saga', rounds: number[]) =>
    ({ workload, concurrency: 64, roundsOrdersPerSecond: rounds, machineCpu: { totalMsPerOrder: 100, msPerOrder: {}, machineBusy: 0.9 } }) as unknown as LevelResult;

  it('compares round by round, takes the median, and judges the targets from it', () => {
    const levels = [level('baseline', [10, 10, 10]), level('baseline-new', [16, 15, 14]), level('saga', [15, 14, 16])];
    const ratios = throughputRatios(levels);
    expect(ratios).toEqual([{ concurrency: 64, overOldShape: { median: 1.5, rounds: [1.5, 1.4, 1.6] }, overNewShape: { median: 0.938, rounds: [0.938, 0.933, 1.143] } }]);

    const cost = { events: 21, workflowTasks: 3, activityTasks: 2, localActivities: 2, searchAttributeUpserts: 2, timers: 0 };
    const paths = Object.fromEntries(SAGA_PATHS.map((path) => [path, cost])) as RoundTrips['paths'];
    const workloads = { baseline: { ...cost, sampled: 3 }, 'baseline-new': { ...cost, sampled: 3 }, saga: { ...cost, sampled: 3 } };
    const targets = roundTripTargets({ paths, workloads, ratios }, levels, { offeredPerSecond: 4, p50Ms: 120, p99Ms: 300 });
    expect(targets.map((target) => [target.name, target.met])).toEqual([
      ['a completed order costs the Temporal server', true],
      ['saga throughput at 64 vs a no-op workflow of the old shape', true],
      ['saga throughput at 64 vs a no-op workflow of its own new shape', true],
      ['one-call checkout at 4 checkouts/s', false],
    ]);
    expect(roundTripsReport({ paths, workloads, ratios }, levels)).toContain('| cancelled after capture | 21 | 3 | 2 | 2 | 2 | 0 |');
  });
});
