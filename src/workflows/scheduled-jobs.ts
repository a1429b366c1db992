// The workflows Temporal Schedules start: the retention reaper's sweep and the daily
// reconciliation, whose report a query answers.
import { defineQuery, proxyActivities, setHandler, setWorkflowOptions } from '@temporalio/workflow';
import type { ReconciliationReportSummary, RetentionActivities } from '../operations/retention/activities.js';
import type { ReapHorizons, ReapReport } from '../operations/retention/reaper.js';

/**
 * The workflows Temporal Schedules start (src/operations/retention/schedules.ts): each run is one job, so the
 * schedule's history of runs is the job's log, and a run that fails is retried by its activity's
 * policy and shown failed in the UI instead of vanishing into a cron log.
 */

const { reapExpired } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '10m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 5 },
});

const { reconcileOrders } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '30s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 5 },
});

/** One sweep of every retention horizon; its result says what it deleted per table. */
export async function retentionReaper(horizons: ReapHorizons): Promise<ReapReport> {
  return reapExpired(horizons);
}

/**
 * The scheduled jobs AUTO_UPGRADE: a run started on a build that is being retired moves to the
 * current one at its next task, so an old build drains without waiting for a 30-minute
 * reconciliation. That is safe because each job is one activity call and nothing else: the
 * commands a run has recorded are the same on every build. A change to a job's commands
 * therefore ships under a new workflow type, never by editing this one in place.
 */
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, retentionReaper);

/** The daily reconciliation's report: null while the check runs. */
export const reconciliationReportQuery = defineQuery<ReconciliationReportSummary | null>('reconciliationReport');

/**
 * The daily reconciliation (`npm run reconcile`, on a schedule). Its report is the run's result
 * and answers `reconciliationReportQuery` for as long as the namespace keeps the closed run.
 */
export async function dailyReconciliation(): Promise<ReconciliationReportSummary> {
  let report: ReconciliationReportSummary | null = null;
  setHandler(reconciliationReportQuery, () => report);
  report = await reconcileOrders();
  return report;
}
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, dailyReconciliation);
