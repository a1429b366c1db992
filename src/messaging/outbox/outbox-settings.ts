// The outbox dispatcher's settings from the environment: rows per batch and the poll interval.
import { z } from 'zod';
import { ConfigError } from '../../platform/config/config-error.js';

type Env = Record<string, string | undefined>;

const outboxSchema = z.object({
  /** Rows one dispatcher transaction claims and publishes. Default 100. */
  OUTBOX_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
  /** Pause between polls of a drained outbox. Default 500 ms. */
  OUTBOX_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
});

export interface OutboxSettings {
  batchSize: number;
  pollIntervalMs: number;
}

export function loadOutboxSettings(env: Env = process.env): OutboxSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = outboxSchema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return { batchSize: parsed.data.OUTBOX_BATCH_SIZE, pollIntervalMs: parsed.data.OUTBOX_POLL_INTERVAL_MS };
}
