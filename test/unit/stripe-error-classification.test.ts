// Proves how Stripe errors are classified for retry or failure, and that a decline carries its code
// and PaymentIntent.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { classifyStripeError } from '../../src/money/stripe/error-classification.js';

type Raw = ConstructorParameters<typeof Stripe.errors.StripeError>[0];

function stripeError(raw: Raw & { type: string; statusCode?: number }): Stripe.errors.StripeError {
  return Stripe.errors.StripeError.generate(raw);
}

describe('classifyStripeError', () => {
  it.each([
    [
      '402 card_error',
      stripeError({ type: 'card_error', statusCode: 402, code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' }),
      'declined',
    ],
    ['400 idempotency_error', stripeError({ type: 'idempotency_error', statusCode: 400, message: 'Keys for idempotent requests can only be used with the same parameters' }), 'idempotency-conflict'],
    ['409 key in use', stripeError({ type: 'invalid_request_error', statusCode: 409, code: 'idempotency_key_in_use', message: 'in progress' }), 'retryable'],
    ['429 rate limit', stripeError({ type: 'invalid_request_error', statusCode: 429, code: 'rate_limit', message: 'Too many requests' }), 'retryable'],
    ['500 api_error', stripeError({ type: 'api_error', statusCode: 500, message: 'Something went wrong' }), 'retryable'],
    ['503 without a type', stripeError({ type: 'api_error', statusCode: 503, message: 'unavailable' }), 'retryable'],
    ['a lost connection', new Stripe.errors.StripeConnectionError({ message: 'socket hang up' }), 'retryable'],
    ['401 authentication', stripeError({ type: 'authentication_error', statusCode: 401, message: 'Invalid API Key' }), 'retryable'],
    ['400 invalid_request_error', stripeError({ type: 'invalid_request_error', statusCode: 400, code: 'parameter_missing', message: 'Missing required param: amount.' }), 'invalid-request'],
    ['404 resource_missing', stripeError({ type: 'invalid_request_error', statusCode: 404, code: 'resource_missing', message: 'No such payment_method' }), 'invalid-request'],
    ['a non-Stripe error', new Error('ECONNRESET'), 'retryable'],
  ])('%s is %s', (_label, error, kind) => {
    expect(classifyStripeError(error).kind).toBe(kind);
  });

  it('carries the decline code and the PaymentIntent of a decline', () => {
    const error = stripeError({
      type: 'card_error',
      statusCode: 402,
      code: 'card_declined',
      decline_code: 'stolen_card',
      message: 'Your card was declined.',
      payment_intent: { id: 'pi_123' } as Stripe.PaymentIntent,
    });
    expect(classifyStripeError(error)).toEqual({
      kind: 'declined',
      code: 'card_declined',
      declineCode: 'stolen_card',
      paymentIntentId: 'pi_123',
    });
  });
});
