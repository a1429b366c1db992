// Creates or updates, at every worker start, the Temporal Schedules for the retention reaper and
// the daily reconciliation, and reads the last reconciliation's report.
import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleSpec,
  type Workflow,
} from '@temporalio/client';
import type { dailyReconciliation, retentionReaper } from '../../workflows/index.js';
import type { ReconciliationReportSummary } from './activities.js';
import type { RetentionSettings } from './settings.js';

/**
 * The scheduled jobs: the retention reaper (every RETENTION_REAP_EVERY_MINUTES) and the daily
 * reconciliation (at RECONCILE_HOUR_UTC), as Temporal Schedules whose runs are workflows on the
 * order worker's task queue.
 *
 * Who creates them: the worker, at every start, idempotently (create; if it exists, update it to
 * what this worker's settings say). A deployment cannot forget a separate step, a schedule
 * deleted by hand comes back with the next worker, and a changed horizon takes effect with the
 * deploy that changed it. Workers racing at start write the same definition, so the race is
 * harmless; overlapping runs are skipped, so two workers never sweep at once on the schedule's
 * account. What a worker does not do is delete schedules: stopping a job is an operator's act
 * (`temporal schedule pause --schedule-id ...`), and a paused schedule stays paused, because the
 * update keeps its state. A worker that cannot write them (the frontend slow or refusing) logs it
 * and polls anyway: payments matter more than a sweep, and the next start tries again. The
 * alternative, a separate `npm run schedules` run once per deploy like the migrations, would
 * avoid nothing the idempotent update does not, and would be one more step to forget.
 */

/** The reaper's schedule ID, one per task queue (so tests on their own queues do not collide). */
export const reaperScheduleId = (taskQueue: string) => `retention-reaper-${taskQueue}`;
/** The daily reconciliation's schedule ID. */
export const reconciliationScheduleId = (taskQueue: string) => `daily-reconciliation-${taskQueue}`;

interface Job<W extends Workflow> {
  scheduleId: string;
  spec: ScheduleSpec;
  action: ScheduleOptionsStartWorkflowAction<W>;
  note: string;
}

function jobs(taskQueue: string, settings: RetentionSettings) {
  const reaper: Job<typeof retentionReaper> = {
    scheduleId: reaperScheduleId(taskQueue),
    spec: { intervals: [{ every: settings.reapEveryMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'retentionReaper',
      workflowId: reaperScheduleId(taskQueue),
      taskQueue,
      args: [{ outboxSentMs: settings.outboxSentMs, inboxMs: settings.inboxMs, batchSize: settings.batchSize }],
      workflowExecutionTimeout: '1h',
    },
    note: 'Deletes activity keys, sent outbox rows and inbox rows past their retention horizon (README, "Retention").',
  };
  const reconciliation: Job<typeof dailyReconciliation> = {
    scheduleId: reconciliationScheduleId(taskQueue),
    spec: { calendars: [{ hour: settings.reconcileHourUtc, minute: 0 }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'dailyReconciliation',
      workflowId: reconciliationScheduleId(taskQueue),
      taskQueue,
      args: [],
      workflowExecutionTimeout: '3h',
    },
    note: 'Checks invariants I1-I9 against Stripe, as npm run reconcile does; query reconciliationReport for the report.',
  };
  return [reaper, reconciliation] as const;
}

/** Creates both schedules, or updates them to these settings; a paused one stays paused. */
export async function ensureSchedules(client: Client, taskQueue: string, settings: RetentionSettings): Promise<string[]> {
  const [reaper, reconciliation] = jobs(taskQueue, settings);
  await ensureSchedule(client, reaper);
  await ensureSchedule(client, reconciliation);
  return [reaper.scheduleId, reconciliation.scheduleId];
}

async function ensureSchedule<W extends Workflow>(client: Client, job: Job<W>): Promise<void> {
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1h' } as const;
  try {
    await client.schedule.create({ scheduleId: job.scheduleId, spec: job.spec, action: job.action, policies, state: { note: job.note } });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(job.scheduleId).update((previous) => ({
      ...previous,
      spec: job.spec,
      action: job.action,
      policies,
      state: { ...previous.state, note: previous.state.paused ? previous.state.note : job.note },
    }));
  }
}

/**
 * The last daily reconciliation's report, from the most recent run its schedule started: null
 * when none has run yet, or while the latest run is still checking.
 */
export async function lastReconciliationReport(client: Client, taskQueue: string): Promise<ReconciliationReportSummary | null> {
  const description = await client.schedule.getHandle(reconciliationScheduleId(taskQueue)).describe();
  const latest = description.info.recentActions.at(-1);
  if (!latest) return null;
  const run = client.workflow.getHandle<typeof dailyReconciliation>(latest.action.workflow.workflowId, latest.action.workflow.firstExecutionRunId);
  return run.query<ReconciliationReportSummary | null>('reconciliationReport');
}
