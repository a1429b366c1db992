// The soak run tiny: one minute of load at about 100 orders, every fault on, sampled every 5 s,
// with the outbox dispatcher, the receipts consumer and the shortened reaper running beside it.
import { describe, expect, inject, it } from 'vitest';
import { runSoak } from '../../src/operations/chaos/soak.js';
import { formatSoakSummary } from '../../src/operations/chaos/soak-summary.js';
import { SOAK_TABLES } from '../../src/operations/chaos/soak-tables.js';
import { loadRetentionSettings } from '../../src/operations/retention/settings.js';

describe('soak', () => {
  it("shortens every horizon only through the soak's own setting, which production refuses", () => {
    const soak = loadRetentionSettings({ RETENTION_SOAK_HORIZON_SECONDS: '60' });
    expect(soak).toMatchObject({ activityKeyMs: 60_000, outboxSentMs: 60_000, inboxMs: 60_000, reapEveryMs: 12_000 });
    expect(() => loadRetentionSettings({ RETENTION_SOAK_HORIZON_SECONDS: '60', NODE_ENV: 'production' })).toThrow(
      'RETENTION_SOAK_HORIZON_SECONDS: a soak-only setting, refused with NODE_ENV=production; unset it',
    );
    expect(() => loadRetentionSettings({ RETENTION_SOAK_HORIZON_SECONDS: '5' })).toThrow(/RETENTION_SOAK_HORIZON_SECONDS/);
  });

  it('samples the run, ends every order with no violation, and judges every target', async () => {
    const summary = await runSoak({
      minutes: 1,
      orders: 100,
      ratePerSecond: 100 / 60,
      seed: 11,
      sampleEveryMs: 5_000,
      drainSeconds: 90,
      temporal: { address: inject('temporalAddress'), cli: inject('temporalCli') },
      workflowBundlePath: inject('workflowBundlePath'),
      // tsx on src/: dist/ is built (and emptied first) by the production-build test, which also
      // starts the soak's build workers (test/integration/production-build.test.ts).
      workerCode: 'source',
    });
    const text = formatSoakSummary(summary);

    expect(summary.options.orders, text).toBe(100);
    expect(summary.options.worker, text).toBe('node --import tsx src/worker.ts');
    expect(summary.chaos.violations, text).toEqual([]);
    expect(summary.chaos.unfinished, text).toBe(0);
    expect(summary.verdicts.violations.met, text).toBe(true);
    // The faults really struck during the soak.
    expect(summary.chaos.faults.responsesDropped, text).toBeGreaterThan(0);
    expect(summary.chaos.faults.workerKills, text).toBeGreaterThan(0);

    expect(summary.samples.length, text).toBeGreaterThanOrEqual(2);
    const load = summary.samples.filter((sample) => sample.phase === 'load');
    expect(load.length, text).toBeGreaterThanOrEqual(2);
    for (const sample of load) expect(sample.workerRssMb, text).toBeGreaterThan(0);
    expect(load.at(-1)?.longLivedRssMb, text).toBeGreaterThan(0);
    expect(Object.keys(load.at(-1)?.rows ?? {}).sort(), text).toEqual([...SOAK_TABLES].sort());
    expect(load.at(-1)?.rows.activity_idempotency, text).toBeGreaterThan(0);
    // By the last sample every order had ended.
    const final = summary.samples.at(-1);
    expect(final?.phase, text).toBe('final');
    expect(final?.ordersEnded, text).toBe(100);
    // The dispatcher published every event and the receipts consumer took them in.
    expect(final?.outboxUnsent, text).toBe(0);
    expect(final?.rows.outbox, text).toBeGreaterThan(0);
    expect(final?.rows.processed_messages, text).toBeGreaterThan(0);

    // Every target has a verdict: the RSS and lag targets are judged even in a minute; a minute is
    // too short for the tables', which says so.
    expect(typeof summary.verdicts.workerRss.met, text).toBe('boolean');
    expect(typeof summary.verdicts.outboxLag.met, text).toBe('boolean');
    expect(summary.verdicts.tables.met, text).toBeNull();
    for (const verdict of Object.values(summary.verdicts)) expect(verdict.measured, text).not.toBe('');
    expect(summary.ok, text).toBe(Object.values(summary.verdicts).every((verdict) => verdict.met !== false));
  }, 240_000);
});
