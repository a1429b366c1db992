// Counts a chaos run's retries: activity attempts from the workflows' histories and keyed
// re-attempts from activity_idempotency.
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';

export interface RetryCounts {
  /** Σ (attempt − 1) over every activity in each order's latest run: what Temporal retried. */
  activityRetries: number;
  /** Activities that needed more than one attempt. */
  activitiesRetried: number;
  /** Σ (attempts − 1) over Stripe-keyed intents in activity_idempotency: registrations after the first. */
  keyedReattempts: number;
  keyedIntents: number;
}

/** Retries, read from the workflows' histories and from the idempotency records. */
export async function countRetries(client: Client, db: Pool, workflowIds: string[]): Promise<RetryCounts> {
  let activityRetries = 0;
  let activitiesRetried = 0;
  const queue = [...workflowIds];
  const reader = async () => {
    for (let workflowId = queue.pop(); workflowId !== undefined; workflowId = queue.pop()) {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      for (const event of history.events ?? []) {
        const attempt = event.activityTaskStartedEventAttributes?.attempt ?? 1;
        if (attempt > 1) {
          activityRetries += attempt - 1;
          activitiesRetried += 1;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, reader));
  const { rows } = await db.query<{ intents: number; reattempts: number }>(
    `select count(*)::int as intents, coalesce(sum(greatest(attempts - 1, 0)), 0)::int as reattempts from activity_idempotency`,
  );
  return {
    activityRetries,
    activitiesRetried,
    keyedReattempts: rows[0]?.reattempts ?? 0,
    keyedIntents: rows[0]?.intents ?? 0,
  };
}
