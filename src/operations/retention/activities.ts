// The scheduled jobs' activities on the order worker: one retention sweep, and the daily
// reconciliation whose trimmed summary its workflow keeps for queries.
import { ApplicationFailure } from '@temporalio/common';
import type { Pool } from 'pg';
import type Stripe from 'stripe';
import { checkInvariants } from '../reconcile/invariant-checker.js';
import { summarize, type ReconciliationSummary } from '../reconcile/summary.js';
import { reapExpired, type ReapHorizons, type ReapReport } from './reaper.js';

/** The most violations a stored report carries; the count is always whole. */
const MAX_REPORTED_VIOLATIONS = 500;

/**
 * What the daily reconciliation's workflow keeps and answers its query with: the summary without
 * the per-order list (a million orders do not fit in a payload), and at most 500 violations.
 */
export type ReconciliationReportSummary = Omit<ReconciliationSummary, 'orders'> & { violationCount: number };

/**
 * The scheduled jobs' activities, registered on the order worker next to the saga's. Both are
 * safe to run twice: the reaper deletes only what is past its horizon, the reconciliation reads.
 */
export function createRetentionActivities(deps: { db: Pool; stripe: Stripe }) {
  return {
    /** One sweep; fails (and is retried) if any table's sweep failed, after sweeping the rest. */
    async reapExpired(horizons: ReapHorizons): Promise<ReapReport> {
      const report = await reapExpired(deps.db, horizons);
      if (report.failures.length > 0) {
        throw ApplicationFailure.retryable(
          report.failures.map((failure) => `${failure.table}: ${failure.message}`).join('; '),
          'ReapFailed',
          report,
        );
      }
      return report;
    },
    /** The invariant check of `npm run reconcile`, over every order. */
    async reconcileOrders(): Promise<ReconciliationReportSummary> {
      const { orders: _orders, ...summary } = summarize(await checkInvariants({ db: deps.db, stripe: deps.stripe }));
      return { ...summary, violationCount: summary.violations.length, violations: summary.violations.slice(0, MAX_REPORTED_VIOLATIONS) };
    },
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
