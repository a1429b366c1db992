// The Stripe SDK client every caller uses: pinned API version, no SDK retries by default, timed
// requests, pointed at Stripe or at the emulator.
import Stripe from 'stripe';
import { measuredHttpClient } from './measured-http-client.js';

/** The Stripe API version this project is written and tested against. */
export const STRIPE_API_VERSION = '2026-10-28.endive' as const;

export interface StripeClientOptions {
  /** A secret key (`sk_test_...` for test mode; the emulator accepts any `sk_test_` key). */
  secretKey: string;
  /**
   * Base URL of a Stripe-compatible server, such as the project's emulator
   * (`http://127.0.0.1:12111`). Unset: the SDK talks to Stripe itself.
   */
  apiBase?: string | undefined;
  /**
   * Retries the SDK makes on its own, reusing the same idempotency key.
   * Default 0: the Temporal activity retry policy is the single place retries are decided,
   * so a failed attempt surfaces to it instead of hiding inside one activity attempt.
   */
  maxNetworkRetries?: number;
  /** Per-request timeout in milliseconds. Default 20 000. */
  timeoutMs?: number;
}

/**
 * Builds the official SDK client. Code on top of it switches between the emulator and Stripe's
 * test mode through `apiBase` alone.
 */
export function createStripeClient(options: StripeClientOptions): Stripe {
  const base = options.apiBase ? new URL(options.apiBase) : undefined;
  return new Stripe(options.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
    timeout: options.timeoutMs ?? 20_000,
    telemetry: false,
    // Timed for the worker's metrics (a no-op outside an activity).
    httpClient: measuredHttpClient(),
    ...(base && {
      host: base.hostname,
      port: base.port === '' ? (base.protocol === 'https:' ? 443 : 80) : Number(base.port),
      protocol: base.protocol === 'https:' ? 'https' : 'http',
    }),
  });
}
