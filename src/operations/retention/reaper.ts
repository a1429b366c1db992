// The retention reaper's sweep: deletes expired rows from activity_idempotency, the outbox,
// settled objects' states, webhook events and the inbox in short batches, one table's failure not
// stopping the others.
import type { Pool } from 'pg';
import { countExpiredOpenKeys, reapExpiredKeys } from '../../money/idempotency/activity-idempotency-store.js';
import { reapInboxMessages } from '../../messaging/inbox.js';
import { reapSentRows } from '../../messaging/outbox/outbox-store.js';
import { reapSettledStates, reapWebhookEvents, STRIPE_WEBHOOK_SUBSCRIBER } from '../../messaging/webhooks/record-stripe-event.js';
import type { RetentionSettings } from './settings.js';

/**
 * The tables the reaper keeps bounded, in the order it sweeps them: a settled object's state
 * before the webhook events, so the event that was its latest word goes in the same sweep.
 */
export const REAPED_TABLES = ['activity_idempotency', 'outbox', 'stripe_object_states', 'stripe_webhook_events', 'processed_messages'] as const;
export type ReapedTable = (typeof REAPED_TABLES)[number];

export interface ReapReport {
  /** Rows deleted per table (a webhook event's inbox receipt goes with it, counted under the event). */
  deleted: Record<ReapedTable, number>;
  /** Activity keys past their `expires_at` but still open (pending, processing): kept. */
  expiredOpenKeys: number;
  /** Tables whose sweep failed, and why; the others were still swept. */
  failures: { table: ReapedTable; message: string }[];
}

export type ReapHorizons = Pick<RetentionSettings, 'outboxSentMs' | 'inboxMs' | 'batchSize'>;

/**
 * One sweep of every retention horizon. Each table's rows are deleted by its own module's query,
 * in bounded batches that are each one short statement, so the sweep never holds a lock longer
 * than a batch and may run alongside the saga. A table whose sweep fails does not stop the others.
 * Activity keys go by their own `expires_at`, set at registration from the key horizon.
 */
export async function reapExpired(db: Pool, horizons: ReapHorizons): Promise<ReapReport> {
  const sweeps: Record<ReapedTable, () => Promise<number>> = {
    activity_idempotency: () => reapExpiredKeys(db, horizons.batchSize),
    outbox: () => reapSentRows(db, horizons.outboxSentMs, horizons.batchSize),
    stripe_object_states: () => reapSettledStates(db, horizons.inboxMs, horizons.batchSize),
    stripe_webhook_events: () => reapWebhookEvents(db, horizons.inboxMs, horizons.batchSize),
    processed_messages: () => reapInboxMessages(db, horizons.inboxMs, horizons.batchSize, [STRIPE_WEBHOOK_SUBSCRIBER]),
  };
  const report: ReapReport = {
    deleted: { activity_idempotency: 0, outbox: 0, stripe_object_states: 0, stripe_webhook_events: 0, processed_messages: 0 },
    expiredOpenKeys: 0,
    failures: [],
  };
  for (const table of REAPED_TABLES) {
    try {
      report.deleted[table] = await sweeps[table]();
    } catch (error) {
      report.failures.push({ table, message: error instanceof Error ? error.message : String(error) });
    }
  }
  report.expiredOpenKeys = await countExpiredOpenKeys(db).catch(() => 0);
  return report;
}
