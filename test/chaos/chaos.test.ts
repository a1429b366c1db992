// The short chaos run: 100 orders under every kind of fault for 20 s must all end with
// invariants I1–I9 holding.
import { describe, expect, inject, it } from 'vitest';
import { runChaos } from '../../src/operations/chaos/chaos-run.js';
import { formatChaosSummary } from '../../src/operations/chaos/summary.js';

/**
 * The short chaos run: 100 orders through two worker processes while every kind of fault
 * strikes for 20 s, then every order must have ended and I1–I9 must hold. A SIGKILLed worker's
 * activity is retried once its heartbeat timeout (10 s) passes, after a backoff; the run allows
 * 90 s after the faults for the last orders to end.
 */
describe('chaos run', () => {
  it('ends every order with no invariant broken, whatever was killed, dropped, terminated or reset', async () => {
    const report = await runChaos({
      orders: 100,
      durationSeconds: 20,
      drainSeconds: 90,
      seed: 7,
      temporal: { address: inject('temporalAddress'), cli: inject('temporalCli') },
      workflowBundlePath: inject('workflowBundlePath'),
    });
    const summary = formatChaosSummary(report);

    expect(report.violations, summary).toEqual([]);
    expect(report.unfinished, summary).toEqual([]);
    // Workers die only when the run kills them (a terminated backend once killed one on its own).
    expect(report.workers.exits, summary).toEqual([]);
    // The faults really struck, and the mix really reached every ending.
    expect(report.faults.responsesDropped, summary).toBeGreaterThan(0);
    expect(report.faults.workerKills, summary).toBeGreaterThan(0);
    expect(report.faults.backendTerminations, summary).toBeGreaterThan(0);
    // One reset per 50 orders, every one of them landed on a running workflow.
    expect(report.faults.resets, summary).toBe(report.faults.resetsPlanned);
    expect(report.faults.resetsPlanned, summary).toBe(2);
    expect(report.replays.servedByStripe, summary).toBeGreaterThan(0);
    // Money moved and was undone under the faults too: captures, and cancelled orders voided or refunded.
    expect(report.money.captured, summary).toBeGreaterThan(0);
    expect(report.money.voided + report.money.refunded, summary).toBeGreaterThan(0);
    expect(Object.keys(report.outcomes), summary).toEqual(expect.arrayContaining(['completed', 'declined', 'compensated']));
  }, 240_000);
});
