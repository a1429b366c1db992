// Finds an order's PaymentIntents in Stripe by their `order_id` metadata, for when our own
// records cannot say whether a charge happened.
import type Stripe from 'stripe';

/**
 * Finds the order's succeeded PaymentIntent by the `order_id` metadata every saga charge
 * carries. Used only where our own records cannot tell whether a charge happened.
 *
 * Stripe's search index lags writes by up to a minute in live and test mode; callers use it
 * for outcomes that are minutes or hours old, never for a request that just returned.
 */
export async function findSucceededPaymentIntent(stripe: Stripe, orderId: string): Promise<Stripe.PaymentIntent | null> {
  const found = await stripe.paymentIntents.search({ query: `metadata['order_id']:'${orderId}'`, limit: 10 });
  const succeeded = found.data.filter((intent) => intent.status === 'succeeded');
  if (succeeded.length > 1) {
    // I1 is already broken: say so loudly rather than pick one.
    throw new Error(`order '${orderId}' has ${succeeded.length} succeeded PaymentIntents in Stripe; needs review`);
  }
  return succeeded[0] ?? null;
}

/**
 * Every PaymentIntent carrying the order's `order_id` metadata, whatever its status: what the
 * compensations and the reconciliation consult when our own records cannot say. Subject to the
 * same search lag.
 */
export async function findOrderPaymentIntents(stripe: Stripe, orderId: string): Promise<Stripe.PaymentIntent[]> {
  const found = await stripe.paymentIntents.search({ query: `metadata['order_id']:'${orderId}'`, limit: 100 });
  return found.data;
}
