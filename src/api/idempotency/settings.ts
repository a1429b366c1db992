// The API's Idempotency-Key settings, read from the environment: how long a key's record and its
// tombstone are kept, and how long a request's lease on a pending key lasts.
import { z } from 'zod';
import { ConfigError } from '../../platform/config/config-error.js';

type Env = Record<string, string | undefined>;

const HOUR_MS = 3_600_000;

const schema = z.object({
  /**
   * How long a key's full record (its stored response) is kept. Default 7 days: longer than
   * every replay horizon of an order (client retries, queue redelivery, webhook replays for
   * 3 days, operator replays, settlement).
   */
  API_IDEMPOTENCY_RETENTION_HOURS: z.coerce.number().int().min(1, 'must be at least 1 hour').max(24 * 365).default(7 * 24),
  /** How long the compact tombstone (hash + resource ID) outlives it. Default 90 days. */
  API_IDEMPOTENCY_TOMBSTONE_DAYS: z.coerce.number().int().min(1, 'must be at least 1 day').max(3650).default(90),
  /** The lease a request holds on a pending key while it starts the workflow. Default 30 s. */
  API_IDEMPOTENCY_LEASE_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
});

export interface ApiIdempotencySettings {
  retentionMs: number;
  tombstoneMs: number;
  leaseMs: number;
}

export const DEFAULT_API_IDEMPOTENCY: ApiIdempotencySettings = { retentionMs: 7 * 24 * HOUR_MS, tombstoneMs: 90 * 24 * HOUR_MS, leaseMs: 30_000 };

export function loadApiIdempotencySettings(env: Env = process.env): ApiIdempotencySettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return {
    retentionMs: parsed.data.API_IDEMPOTENCY_RETENTION_HOURS * HOUR_MS,
    tombstoneMs: parsed.data.API_IDEMPOTENCY_TOMBSTONE_DAYS * 24 * HOUR_MS,
    leaseMs: parsed.data.API_IDEMPOTENCY_LEASE_SECONDS * 1000,
  };
}
