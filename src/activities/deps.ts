// What every activity is built over (the pg pool and the Stripe client) and the tunable
// deadlines and retentions, with their defaults.
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
  /**
   * How long the saga waits for a settling payment's webhook before it asks Stripe itself, and
   * between such checks. The webhook is the fast path; this bounds how long a lost one costs.
   * Default 15 minutes.
   */
  settlementRecheckMs?: number;
  /**
   * How long a payment may stay `processing` before the saga cancels it and ends the order
   * declined. Default 7 days: bank debits take up to a few business days to settle.
   */
  processingDeadlineMs?: number;
  /**
   * How long a payment may wait in `requires_action` for the customer to authenticate before it
   * is cancelled. Default 1 hour.
   */
  authenticationDeadlineMs?: number;
  /**
   * How long before Stripe's `capture_before` the saga stops trying to capture a hold and voids
   * it instead. It covers the capture's own retries and any skew between our clock and Stripe's.
   * Default 1 hour, against Stripe's 7-day window for online card payments.
   */
  captureMarginMs?: number;
}

export const DEFAULT_SETTLEMENT_RECHECK_MS = 15 * 60 * 1000;
export const DEFAULT_PROCESSING_DEADLINE_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_AUTHENTICATION_DEADLINE_MS = 60 * 60 * 1000;

export const DEFAULT_CAPTURE_MARGIN_MS = 60 * 60 * 1000;

export const DEFAULT_STRIPE_KEY_RETENTION_MS = 23 * 60 * 60 * 1000;
export const DEFAULT_KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
