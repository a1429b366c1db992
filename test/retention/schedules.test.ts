// Proves the worker creates the reaper and daily-reconciliation schedules once each, that a
// triggered reaper run reaps, and that the reconciliation's last report answers its query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReapReport } from '../../src/operations/retention/reaper.js';
import { lastReconciliationReport, reaperScheduleId, reconciliationScheduleId } from '../../src/operations/retention/schedules.js';
import { DEFAULT_RETENTION } from '../../src/operations/retention/settings.js';
import { runCli } from '../support/run-cli.js';
import { startSagaHarness, type SagaHarness } from '../support/saga-harness.js';
import { startWorkerProcess, stopWorkerProcesses } from '../support/worker-process.js';

let harness: SagaHarness;

beforeAll(async () => {
  harness = await startSagaHarness({ worker: false });
  // The worker process as an operator starts it: it creates the schedules before it polls.
  await startWorkerProcess(harness);
});
afterAll(async () => {
  await stopWorkerProcesses();
  for (const id of [reaperScheduleId(harness.taskQueue), reconciliationScheduleId(harness.taskQueue)]) {
    await harness.client.schedule.getHandle(id).delete().catch(() => undefined);
  }
  await harness.close();
});

/** Triggers the schedule now and waits for the run it started to finish; returns its result. */
async function triggerAndWait<T>(scheduleId: string): Promise<T> {
  const schedule = harness.client.schedule.getHandle(scheduleId);
  const before = (await schedule.describe()).info.recentActions.length;
  await schedule.trigger();
  for (let waited = 0; waited < 30_000; waited += 200) {
    const actions = (await schedule.describe()).info.recentActions;
    const latest = actions.length > before ? actions.at(-1) : undefined;
    if (latest) return harness.client.workflow.getHandle(latest.action.workflow.workflowId, latest.action.workflow.firstExecutionRunId).result() as Promise<T>;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`schedule ${scheduleId} started no run within 30 s of its trigger`);
}

describe('the scheduled jobs', () => {
  it('exist once the worker has started, stay one each when another worker starts, and a triggered reaper run reaps', async () => {
    const reaper = await harness.client.schedule.getHandle(reaperScheduleId(harness.taskQueue)).describe();
    expect(reaper.action).toMatchObject({ type: 'startWorkflow', workflowType: 'retentionReaper', taskQueue: harness.taskQueue });
    expect(reaper.action.args).toEqual([
      { outboxSentMs: DEFAULT_RETENTION.outboxSentMs, inboxMs: DEFAULT_RETENTION.inboxMs, batchSize: DEFAULT_RETENTION.batchSize },
    ]);
    expect(reaper.spec.intervals).toMatchObject([{ every: DEFAULT_RETENTION.reapEveryMs }]);
    const reconciliation = await harness.client.schedule.getHandle(reconciliationScheduleId(harness.taskQueue)).describe();
    expect(reconciliation.action).toMatchObject({ type: 'startWorkflow', workflowType: 'dailyReconciliation' });

    // A second worker (a deploy, a scale-out) finds the schedules and updates them in place.
    await startWorkerProcess(harness);
    const ours: string[] = [];
    for await (const schedule of harness.client.schedule.list()) if (schedule.scheduleId.endsWith(harness.taskQueue)) ours.push(schedule.scheduleId);
    expect(ours.sort()).toEqual([reconciliationScheduleId(harness.taskQueue), reaperScheduleId(harness.taskQueue)]);

    await harness.db.pool.query(
      `insert into activity_idempotency (scope, idempotency_key, request_hash, state, result, expires_at) values
         ('stripe.capture', 'reaped', 'h', 'completed', '{}', now() - interval '1 minute'),
         ('stripe.capture', 'kept', 'h', 'completed', '{}', now() + interval '1 day')`,
    );
    const report = await triggerAndWait<ReapReport>(reaperScheduleId(harness.taskQueue));
    expect(report.deleted.activity_idempotency).toBe(1);
    expect(report.failures).toEqual([]);
    const { rows } = await harness.db.pool.query<{ idempotency_key: string }>('select idempotency_key from activity_idempotency');
    expect(rows).toEqual([{ idempotency_key: 'kept' }]);
  });

  it('runs the daily reconciliation on its schedule, and its last report answers a query', async () => {
    const order = await harness.newOrder();
    const started = await harness.start(order);
    expect(await started.handle.result()).toMatchObject({ status: 'completed' });

    await triggerAndWait(reconciliationScheduleId(harness.taskQueue));
    const report = await lastReconciliationReport(harness.client, harness.taskQueue);
    expect(report).toMatchObject({ ok: true, ordersChecked: 1, ordersByStatus: { completed: 1 }, violations: [], violationCount: 0 });

    // The operator's way to the same report.
    const env = { TEMPORAL_ADDRESS: harness.temporalAddress, TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: harness.taskQueue };
    const last = await runCli('src/reconcile.ts', ['--last', '--json'], env);
    expect(last).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(last.stdout)).toEqual(report);
    const none = await runCli('src/reconcile.ts', ['--last'], { ...env, TEMPORAL_TASK_QUEUE: 'no-such-queue' });
    expect(none.code).toBe(3);
    expect(none.stderr.trim()).toMatch(/^reconcile: the check could not run: .+$/);
  });
});
