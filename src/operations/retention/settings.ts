// The retention horizons and reaper cadence from the environment, each refused at start when
// shorter than the replay window that could still present its key.
import { z } from 'zod';
import { ConfigError } from '../../platform/config/config-error.js';

type Env = Record<string, string | undefined>;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The replay windows a deleted row could still be asked about in. A horizon shorter than the
 * longest window that can present its key would let that replay act a second time, so each
 * horizon has a floor built from these, and a shorter one is refused at start.
 */
export const REPLAY_WINDOWS = {
  /** Stripe keeps an idempotency key 24 hours. */
  stripeKeyRetentionMs: 24 * HOUR_MS,
  /**
   * The longest an activity retries under one key: the authorization gives up after 10 minutes,
   * but the capture retries until the hold's window closes and a settling payment is re-checked
   * until its processing deadline, 7 days (src/workflows/activity-options.ts, src/activities/deps.ts).
   */
  activityRetryMs: 7 * DAY_MS,
  /**
   * The longest an order stays open with its keys in use: a payment may settle for up to 7 days
   * (the processing deadline) and its hold may then wait up to 7 days for the capture (Stripe's
   * authorization window for online cards).
   */
  settlementMs: 14 * DAY_MS,
  /** Stripe retries an unacknowledged webhook for up to 3 days. */
  webhookRedeliveryMs: 3 * DAY_MS,
} as const;

const days = (name: string, fallback: number) =>
  z.coerce
    .number({ error: `must be a number of days, such as ${fallback}` })
    .int(`must be a whole number of days, such as ${fallback}`)
    .min(1, 'must be at least 1 day')
    .max(3650, 'must be at most 3650 days')
    .default(fallback)
    .describe(name);

const schema = z.object({
  /**
   * How long after a closed order an operator may still reset its workflow (replaying its
   * activities under their original keys). Keep it no longer than the namespace's retention of
   * closed workflows, past which there is nothing to reset. Default 14 days.
   */
  RETENTION_OPERATOR_RESET_DAYS: days('RETENTION_OPERATOR_RESET_DAYS', 14),
  /**
   * Activity keys (`activity_idempotency`): a key's `expires_at` is its registration plus this.
   * Floor: the longest an order stays open (settlement, which covers Stripe's 24 h and the
   * activity retry window) plus the operator reset window. Default 30 days.
   */
  RETENTION_ACTIVITY_KEY_DAYS: days('RETENTION_ACTIVITY_KEY_DAYS', 30),
  /**
   * Sent outbox rows, counted from their sending. The row is what refuses a replayed transaction
   * a second announcement (unique per order and event), so its floor is the activity keys' floor.
   * Default 30 days.
   */
  RETENTION_OUTBOX_SENT_DAYS: days('RETENTION_OUTBOX_SENT_DAYS', 30),
  /**
   * Inbox receipts (`processed_messages`) and recorded Stripe webhook events, counted from their
   * receipt. Floor: the longest redelivery, Stripe's 3 days of webhook retries (JetStream
   * redelivers within minutes). Default 7 days, which also covers a manual resend after a weekend.
   */
  RETENTION_INBOX_DAYS: days('RETENTION_INBOX_DAYS', 7),
  /** Rows one reaper statement deletes at the most. Default 1000. */
  RETENTION_BATCH_SIZE: z.coerce.number({ error: 'must be a number of rows, such as 1000' }).int().min(1).max(10_000).default(1000),
  /** How often the reaper's schedule runs it. Default every 60 minutes. */
  RETENTION_REAP_EVERY_MINUTES: z.coerce.number({ error: 'must be a number of minutes, such as 60' }).int().min(1).max(24 * 60).default(60),
  /** The UTC hour the daily reconciliation's schedule runs at. Default 3 (03:00 UTC). */
  RECONCILE_HOUR_UTC: z.coerce.number({ error: 'must be an hour from 0 to 23' }).int().min(0).max(23).default(3),
  /**
   * Soak runs only (`npm run soak` sets it for its workers): every horizon this many seconds,
   * below the floors, and the reaper every fifth of it (at least 10 s), so a run of minutes sees
   * its tables level off. Never in production: refused with NODE_ENV=production. Unset by default.
   */
  RETENTION_SOAK_HORIZON_SECONDS: z.coerce.number({ error: 'must be a number of seconds, such as 300' }).int().min(10).max(86_400).optional(),
});

/** Every horizon in milliseconds, and the reaper's cadence. */
export interface RetentionSettings {
  activityKeyMs: number;
  outboxSentMs: number;
  inboxMs: number;
  operatorResetMs: number;
  batchSize: number;
  reapEveryMs: number;
  reconcileHourUtc: number;
}

/** The floor of each horizon, for a given operator reset window. */
export function retentionFloors(operatorResetMs: number) {
  const keyFloorMs =
    Math.max(REPLAY_WINDOWS.stripeKeyRetentionMs, REPLAY_WINDOWS.activityRetryMs, REPLAY_WINDOWS.settlementMs) + operatorResetMs;
  return { activityKeyMs: keyFloorMs, outboxSentMs: keyFloorMs, inboxMs: REPLAY_WINDOWS.webhookRedeliveryMs };
}

const inDays = (ms: number) => `${Math.round((ms / DAY_MS) * 100) / 100} days`;

/** The defaults, as the worker and the reaper use them with no settings given. */
export const DEFAULT_RETENTION: RetentionSettings = loadRetentionSettings({});

/**
 * Reads the retention settings and refuses, one line per setting, a horizon shorter than its
 * floor: such a horizon would delete a key a replay can still present.
 */
export function loadRetentionSettings(env: Env = process.env): RetentionSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  const data = parsed.data;
  const settings: RetentionSettings = {
    activityKeyMs: data.RETENTION_ACTIVITY_KEY_DAYS * DAY_MS,
    outboxSentMs: data.RETENTION_OUTBOX_SENT_DAYS * DAY_MS,
    inboxMs: data.RETENTION_INBOX_DAYS * DAY_MS,
    operatorResetMs: data.RETENTION_OPERATOR_RESET_DAYS * DAY_MS,
    batchSize: data.RETENTION_BATCH_SIZE,
    reapEveryMs: data.RETENTION_REAP_EVERY_MINUTES * 60_000,
    reconcileHourUtc: data.RECONCILE_HOUR_UTC,
  };
  if (data.RETENTION_SOAK_HORIZON_SECONDS !== undefined) {
    if (env.NODE_ENV === 'production') throw new ConfigError(['RETENTION_SOAK_HORIZON_SECONDS: a soak-only setting, refused with NODE_ENV=production; unset it']);
    const horizonMs = data.RETENTION_SOAK_HORIZON_SECONDS * 1000;
    return { ...settings, activityKeyMs: horizonMs, outboxSentMs: horizonMs, inboxMs: horizonMs, reapEveryMs: Math.max(10_000, Math.round(horizonMs / 5)) };
  }
  const floors = retentionFloors(settings.operatorResetMs);
  const why = {
    activityKeyMs: ['RETENTION_ACTIVITY_KEY_DAYS', `settlement (14 days) + RETENTION_OPERATOR_RESET_DAYS (${inDays(settings.operatorResetMs)})`],
    outboxSentMs: ['RETENTION_OUTBOX_SENT_DAYS', `the activity keys' floor: a replayed transaction must still meet its announcement`],
    inboxMs: ['RETENTION_INBOX_DAYS', "Stripe's 3 days of webhook redelivery"],
  } as const;
  const problems = (Object.keys(floors) as (keyof typeof floors)[])
    .filter((horizon) => settings[horizon] < floors[horizon])
    .map((horizon) => {
      const [name, reason] = why[horizon];
      return `${name}: ${inDays(settings[horizon])} is shorter than its floor of ${inDays(floors[horizon])} (${reason}); raise it`;
    });
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}
