/**
 * What the emulator's conformance tests share: `useEmulator()` (one emulator per file, reset before
 * each test), the official SDK pointed at it, raw HTTP and control-API requests, and small helpers.
 */
import qs from 'qs';
import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { EMULATED_API_VERSION, startStripeEmulator, type StripeEmulator, type StripeEmulatorOptions } from '../src/index.js';

export const SECRET_KEY = 'sk_test_emulator_conformance';
export const OTHER_SECRET_KEY = 'sk_test_emulator_other_account';

/**
 * The official SDK on the emulator, set up as the project's own client is (src/money/stripe/client.ts:
 * the same API version, Stripe's Node HTTP client, no telemetry, no retries unless asked), without
 * importing anything from outside the package.
 */
export function sdk(emulator: StripeEmulator, options: { secretKey?: string; maxNetworkRetries?: number } = {}): Stripe {
  const base = new URL(emulator.url);
  return new Stripe(options.secretKey ?? SECRET_KEY, {
    apiVersion: EMULATED_API_VERSION,
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
    timeout: 10_000,
    telemetry: false,
    httpClient: Stripe.createNodeHttpClient(),
    host: base.hostname,
    port: Number(base.port),
    protocol: 'http',
  });
}

/** What a saga charge sends: confirm server-side, no redirects. */
export function chargeParams(orderId: string, overrides: Partial<Stripe.PaymentIntentCreateParams> = {}): Stripe.PaymentIntentCreateParams {
  return {
    amount: 2_500,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    metadata: { order_id: orderId },
    ...overrides,
  };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** A request without the SDK, to see the bytes and headers the SDK hides. */
export async function raw(
  emulator: StripeEmulator,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  options: { params?: Record<string, unknown>; body?: string; idempotencyKey?: string; secretKey?: string | null } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const secretKey = options.secretKey === undefined ? SECRET_KEY : options.secretKey;
  if (secretKey !== null) headers.authorization = `Bearer ${secretKey}`;
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  const encoded = options.body ?? qs.stringify(options.params ?? {});
  const url = method === 'GET' && encoded !== '' ? `${emulator.url}${path}?${encoded}` : `${emulator.url}${path}`;
  const response = await fetch(url, { method, headers, ...(method === 'GET' ? {} : { body: encoded }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

/** JSON from the control API. */
export async function control(emulator: StripeEmulator, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
  const response = await fetch(`${emulator.url}/_emulator${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected the request to fail, but it succeeded');
}

export async function paymentIntentsFor(stripe: Stripe, orderId: string): Promise<Stripe.PaymentIntent[]> {
  const found = await stripe.paymentIntents.search({ query: `metadata['order_id']:'${orderId}'`, limit: 100 });
  return found.data;
}

export function errorBody(response: RawResponse): Record<string, unknown> {
  const envelope = response.json as { error?: Record<string, unknown> } | null;
  if (!envelope?.error) throw new Error(`expected a Stripe error envelope, got ${response.text}`);
  return envelope.error;
}

export interface EmulatorUnderTest {
  emulator: StripeEmulator;
  stripe: Stripe;
}

/**
 * One emulator for the file, an SDK client on it, and a clean emulator before every test: the
 * setup every conformance file shares. Read `emulator` and `stripe` inside tests (they are set in
 * beforeAll).
 */
export function useEmulator(options: StripeEmulatorOptions = {}): EmulatorUnderTest {
  const context = {} as EmulatorUnderTest;
  beforeAll(async () => {
    context.emulator = await startStripeEmulator({ port: 0, ...options });
    context.stripe = sdk(context.emulator);
  });
  afterAll(() => context.emulator.close());
  beforeEach(() => {
    context.emulator.reset();
  });
  return context;
}
