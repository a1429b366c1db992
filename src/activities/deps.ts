import type { Pool } from 'pg';
import type Stripe from 'stripe';

export interface ActivityDeps {
  db: Pool;
  stripe: Stripe;
  /**
   * How long Stripe keeps an idempotency key. A charge key still pending after this long is
   * reconciled by searching Stripe, never re-sent: Stripe may have forgotten it and would charge
   * again. Default 23 hours (Stripe's 24 less an hour of margin for clock skew).
   */
  stripeKeyRetentionMs?: number;
  /** How long our own key records are kept. Default 30 days, past every replay horizon. */
  keyRetentionMs?: number;
}

export const DEFAULT_STRIPE_KEY_RETENTION_MS = 23 * 60 * 60 * 1000;
export const DEFAULT_KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
