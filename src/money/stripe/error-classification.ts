// Classifies every Stripe error the activities see (declined, idempotency conflict, invalid
// request, retryable), so retry decisions are made in one place.
import Stripe from 'stripe';

/**
 * What a Stripe error means for the saga. Every Stripe error the activities see is classified
 * here, in one table, so retry decisions are made in one place and tested as a table.
 */
export type StripeErrorClass =
  /** The card was declined: final, nothing was charged. */
  | { kind: 'declined'; code: string; declineCode: string | null; paymentIntentId: string | null }
  /** The key was reused with other parameters (I7): final, nothing was applied. */
  | { kind: 'idempotency-conflict'; message: string }
  /** The request itself is wrong (a bug or a bad configuration): retrying sends it again. */
  | { kind: 'invalid-request'; code: string | null; message: string }
  /**
   * The outcome is unknown or the request never ran: a lost connection, a 5xx, a 429, or a
   * 409 because the same key is still executing. Retrying under the same key is safe.
   */
  | { kind: 'retryable'; reason: string };

export function classifyStripeError(error: unknown): StripeErrorClass {
  if (!(error instanceof Stripe.errors.StripeError)) {
    return { kind: 'retryable', reason: error instanceof Error ? error.message : String(error) };
  }
  if (error instanceof Stripe.errors.StripeCardError) {
    // The SDK types these as always present; Stripe omits them on some declines.
    const raw = error.raw as { code?: string; decline_code?: string; payment_intent?: { id?: string } };
    return {
      kind: 'declined',
      code: raw.code ?? 'card_declined',
      declineCode: raw.decline_code ?? null,
      paymentIntentId: raw.payment_intent?.id ?? null,
    };
  }
  if (error instanceof Stripe.errors.StripeIdempotencyError) {
    return { kind: 'idempotency-conflict', message: error.message };
  }
  const status = error.statusCode ?? 0;
  // 409: the key is in use by a request still executing (or a lock timeout); 429: rate limited;
  // 5xx and no status (a dropped connection): the outcome is unknown. The same key resolves each.
  if (status === 0 || status === 409 || status === 429 || status >= 500) {
    return { kind: 'retryable', reason: `${error.type} (${status || 'no response'}): ${error.message}` };
  }
  if (error instanceof Stripe.errors.StripeConnectionError || error instanceof Stripe.errors.StripeAPIError) {
    return { kind: 'retryable', reason: `${error.type}: ${error.message}` };
  }
  // 401/403: a revoked or wrong key. Retrying is right: the operator fixes the key and the same
  // request, under the same idempotency key, goes through.
  if (error instanceof Stripe.errors.StripeAuthenticationError || error instanceof Stripe.errors.StripePermissionError) {
    return { kind: 'retryable', reason: `${error.type}: ${error.message}` };
  }
  return { kind: 'invalid-request', code: error.code ?? null, message: error.message };
}
