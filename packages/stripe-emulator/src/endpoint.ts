// The contract every emulated Stripe endpoint implements (validate in `prepare`, then execute)
// and the per-request context it is given.
import type { AsyncSettlement } from './async-settlement.js';
import type { Clock } from './clock.js';
import type { Counters } from './counters.js';
import type { FormParams } from './params.js';
import type { AccountState } from './store.js';
import type { WebhookEndpointRegistry } from './webhooks-endpoints.js';

export interface RequestContext {
  account: AccountState;
  params: FormParams;
  pathParams: Readonly<Record<string, string>>;
  requestId: string;
  /** Only POSTs carry one: Stripe ignores the header on GET and DELETE. */
  idempotencyKey: string | null;
  clock: Clock;
  /** Schedules what settles after the request (asynchronous payments and refunds). */
  settlements: AsyncSettlement;
  /** How long a manual-capture authorization can be captured: `capture_before` is this far out. */
  authorizationWindowMs: number;
  counters: Counters;
  webhookEndpoints: WebhookEndpointRegistry;
}

/** Performs a validated request's effect and returns the response body (status 200). */
export type Execution = () => unknown;

/**
 * One Stripe endpoint, split where Stripe's idempotency layer splits it: `prepare` validates
 * (an ApiError thrown here is not saved under the idempotency key), and the Execution it returns
 * is the part that "began executing" (its result, error or not, is saved).
 */
export interface Endpoint {
  method: 'GET' | 'POST' | 'DELETE';
  /** A fastify route pattern, e.g. `/v1/payment_intents/:id`. */
  path: string;
  prepare(ctx: RequestContext): Execution;
}
