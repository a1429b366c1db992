// The broker settings from the environment: NATS URL, the order-events stream's name, its
// subject prefix and its duplicate window.
import { z } from 'zod';
import { ConfigError } from '../../platform/config/config-error.js';

type Env = Record<string, string | undefined>;

/** The local server this machine runs, and the one the stack starts when nothing else is set. */
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

const natsSchema = z.object({
  /** Where the broker is. Comma-separated for a cluster. Default nats://127.0.0.1:4222. */
  NATS_URL: z
    .string()
    .regex(/^(nats|tls|wss?):\/\/[^,\s]+(,(nats|tls|wss?):\/\/[^,\s]+)*$/, 'must be a NATS URL such as nats://127.0.0.1:4222')
    .default(DEFAULT_NATS_URL),
  /** The JetStream stream the order events live in. Default ORDERS. */
  OUTBOX_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be letters, digits, '-' or '_' (e.g. ORDERS)")
    .default('ORDERS'),
  /** Subjects are `<prefix>.<event_type>`, e.g. orders.order.paid. Default orders. */
  OUTBOX_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "must be dot-separated tokens of letters, digits, '-' or '_' (e.g. orders)")
    .default('orders'),
  /**
   * How long the broker remembers a Nats-Msg-Id and drops a republish of it. Default two minutes
   * (JetStream's own default); past it, consumers' inboxes are what keep a republish harmless.
   */
  OUTBOX_DUPLICATE_WINDOW_MS: z.coerce.number().int().min(100).max(7 * 24 * 60 * 60 * 1000).default(120_000),
  /**
   * This service's nkey seed, in a file only its user may read: the broker knows the service by
   * the key's public half and grants it only its own subjects (docs/security.md). Unset: connect
   * without credentials (a local development broker only).
   */
  NATS_NKEY_SEED_FILE: z.string().min(1).optional(),
  /** The CA that signed the broker's certificate, for tls:// URLs to a broker with a private CA. */
  NATS_TLS_CA_FILE: z.string().min(1).optional(),
});

export interface NatsSettings {
  url: string;
  stream: string;
  subjectPrefix: string;
  duplicateWindowMs: number;
  /** The service's nkey seed file; null = no credentials. */
  seedFile: string | null;
  tlsCaFile: string | null;
}

export function loadNatsSettings(env: Env = process.env): NatsSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = natsSchema.safeParse(present);
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return {
    url: parsed.data.NATS_URL,
    stream: parsed.data.OUTBOX_STREAM,
    subjectPrefix: parsed.data.OUTBOX_SUBJECT_PREFIX,
    duplicateWindowMs: parsed.data.OUTBOX_DUPLICATE_WINDOW_MS,
    seedFile: parsed.data.NATS_NKEY_SEED_FILE ?? null,
    tlsCaFile: parsed.data.NATS_TLS_CA_FILE ?? null,
  };
}
