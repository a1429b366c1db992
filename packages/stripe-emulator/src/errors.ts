// Stripe's error answers: the ApiError endpoints throw, its JSON envelope, and a constructor for
// each error the emulator gives (invalid request, card decline, idempotency, auth, 404, 429, 500).
import type Stripe from 'stripe';

export type StripeErrorType =
  | 'api_error'
  | 'card_error'
  | 'idempotency_error'
  | 'invalid_request_error';

/** The object under `error` in Stripe's error envelope; the SDK copies these fields onto its error classes. */
export interface StripeErrorBody {
  type: StripeErrorType;
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: Stripe.PaymentIntent;
  payment_method?: Stripe.PaymentMethod;
}

export interface StripeErrorEnvelope {
  error: StripeErrorBody;
}

/**
 * A Stripe error answer. Endpoints throw it; the pipeline decides whether it is saved under the
 * idempotency key by where it was thrown (validation or execution), not by its status.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(body.message);
    this.name = 'ApiError';
  }

  envelope(): StripeErrorEnvelope {
    return { error: this.body };
  }
}

function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replaceAll('_', '-')}`;
}

export function invalidRequest(
  message: string,
  options: { param?: string; code?: string; status?: number } = {},
): ApiError {
  const { param, code, status = 400 } = options;
  return new ApiError(status, {
    type: 'invalid_request_error',
    message,
    ...(code !== undefined && { code, doc_url: docUrl(code) }),
    ...(param !== undefined && { param }),
  });
}

/** Stripe's "No such <object>" answer: 404 on the object's own URL, 400 when named by a parameter. */
export function resourceMissing(objectName: string, id: string, param: string, status = 400): ApiError {
  return invalidRequest(`No such ${objectName}: '${id}'`, { param, code: 'resource_missing', status });
}

export function cardError(fields: {
  message: string;
  declineCode: string;
  charge: string;
  paymentIntent: Stripe.PaymentIntent;
  paymentMethod: Stripe.PaymentMethod;
}): ApiError {
  return new ApiError(402, {
    type: 'card_error',
    code: 'card_declined',
    decline_code: fields.declineCode,
    doc_url: docUrl('card_declined'),
    message: fields.message,
    charge: fields.charge,
    payment_intent: fields.paymentIntent,
    payment_method: fields.paymentMethod,
  });
}

export function idempotencyKeyTooLong(length: number): ApiError {
  return invalidRequest(
    `Keys for idempotent requests can be no longer than 255 characters; this key is ${length} characters long.`,
    { param: 'Idempotency-Key' },
  );
}

export function idempotencyParamsMismatch(key: string): ApiError {
  return new ApiError(400, {
    type: 'idempotency_error',
    message:
      'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
      `Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

export function idempotencyEndpointMismatch(key: string, original: string, current: string): ApiError {
  return new ApiError(400, {
    type: 'idempotency_error',
    message:
      `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${original}' vs '${current}'). ` +
      `Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

export function idempotencyKeyInUse(key: string): ApiError {
  return new ApiError(409, {
    type: 'invalid_request_error',
    code: 'idempotency_key_in_use',
    doc_url: docUrl('idempotency_key_in_use'),
    message:
      'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
      `submitted twice, and the other request is still going through): ${key}. Please try again later.`,
  });
}

export function missingApiKey(): ApiError {
  return new ApiError(401, {
    type: 'invalid_request_error',
    message:
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). " +
      'See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.',
  });
}

export function invalidApiKey(redacted: string): ApiError {
  return new ApiError(401, {
    type: 'invalid_request_error',
    message: `Invalid API Key provided: ${redacted}`,
  });
}

export function unrecognizedUrl(method: string, path: string): ApiError {
  return invalidRequest(
    `Unrecognized request URL (${method}: ${path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
    { status: 404 },
  );
}

export function internalError(message = 'An unknown error occurred'): ApiError {
  return new ApiError(500, { type: 'api_error', message });
}

export function rateLimited(): ApiError {
  return new ApiError(429, {
    type: 'invalid_request_error',
    code: 'rate_limit',
    doc_url: docUrl('rate_limit'),
    message:
      'Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.',
  });
}
