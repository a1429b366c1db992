// The request pipeline every Stripe API call goes through: authentication, faults, the
// idempotency lookup, validation and execution, in the order that decides what a key saves.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AsyncSettlement } from './async-settlement.js';
import { authenticate } from './auth.js';
import type { Clock } from './clock.js';
import type { Counters } from './counters.js';
import { closePastDueDisputes } from './disputes.js';
import type { Endpoint, Execution, RequestContext } from './endpoint.js';
import {
  ApiError,
  idempotencyEndpointMismatch,
  idempotencyKeyInUse,
  idempotencyKeyTooLong,
  idempotencyParamsMismatch,
  internalError,
  rateLimited,
} from './errors.js';
import { EMULATED_API_VERSION } from './events.js';
import type { FaultInjector, FaultTarget } from './faults.js';
import { MAX_KEY_LENGTH, type IdempotencyStore, type Reservation, type SavedResponse } from './idempotency.js';
import { lapseExpiredHolds } from './holds.js';
import { newId } from './ids.js';
import { fingerprint, type FormParams } from './params.js';
import type { AccountState, Store } from './store.js';
import type { WebhookEndpointRegistry } from './webhooks-endpoints.js';

export interface PipelineDeps {
  store: Store;
  idempotency: IdempotencyStore;
  faults: FaultInjector;
  counters: Counters;
  clock: Clock;
  settlements: AsyncSettlement;
  webhookEndpoints: WebhookEndpointRegistry;
  authorizationWindowMs: number;
}

export interface StripeRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  stripeVersion: string | undefined;
  params: FormParams;
  pathParams: Readonly<Record<string, string>>;
}

export interface Outcome {
  status: number;
  body: string;
  headers: Record<string, string>;
  /** The key the request was handled under (POST only). */
  idempotencyKey: string | null;
  replayed: boolean;
  /** Destroy the socket instead of answering: the drop_response fault. */
  drop: boolean;
}

function serialize(body: unknown): string {
  return `${JSON.stringify(body, null, 2)}\n`;
}

/**
 * The order a request is about, for fault rules that name one: its own `metadata[order_id]`, or,
 * for a request on an existing PaymentIntent or dispute that carries none (a capture, a cancel,
 * evidence), the order that PaymentIntent (the disputed one) belongs to.
 */
function orderIdOf(params: FormParams, account: AccountState, pathParams: Readonly<Record<string, string>>): string | undefined {
  const metadata = params.metadata;
  if (metadata !== undefined && typeof metadata !== 'string' && !Array.isArray(metadata) && typeof metadata.order_id === 'string') {
    return metadata.order_id;
  }
  const id = pathParams.id;
  if (id?.startsWith('dp_')) {
    const paymentIntent = account.disputes.get(id)?.payment_intent;
    return typeof paymentIntent === 'string' ? account.paymentIntents.get(paymentIntent)?.metadata.order_id : undefined;
  }
  return id?.startsWith('pi_') ? account.paymentIntents.get(id)?.metadata.order_id : undefined;
}

/**
 * Runs one Stripe API request through the stages whose order decides what the idempotency layer
 * saves: authentication (401s are never saved), faults that strike before execution (never
 * saved), the idempotency lookup (replay, 409 or idempotency_error), validation (never saved),
 * then execution, whose answer is saved whatever it is, and finally the drop_response fault.
 */
export async function runStripeRequest(deps: PipelineDeps, endpoint: Endpoint, request: StripeRequest): Promise<Outcome> {
  const requestId = newId('req');
  const baseHeaders: Record<string, string> = {
    'request-id': requestId,
    'stripe-version': request.stripeVersion ?? EMULATED_API_VERSION,
  };
  deps.counters.request();

  const header = request.idempotencyKey;
  const key = request.method === 'POST' && header !== undefined && header !== '' ? header : null;
  if (key !== null) baseHeaders['idempotency-key'] = key;
  const answer = (status: number, body: unknown, extra: Readonly<Record<string, string>> = {}): Outcome => ({
    status,
    body: serialize(body),
    headers: { ...baseHeaders, ...extra },
    idempotencyKey: key,
    replayed: false,
    drop: false,
  });
  const answerError = (error: ApiError): Outcome => answer(error.status, error.envelope(), error.headers);

  let secretKey: string;
  try {
    secretKey = authenticate(request.authorization);
  } catch (error) {
    if (error instanceof ApiError) return answerError(error);
    throw error;
  }
  const account = deps.store.account(secretKey);
  // Time passes at Stripe whether or not anyone asks: holds past capture_before have lapsed, and
  // disputes past due_by have closed.
  deps.counters.holdsLapsed(lapseExpiredHolds(account, deps.clock.nowSeconds()));
  closePastDueDisputes(account, deps.clock.nowSeconds());
  const target: FaultTarget = { method: request.method, path: request.path, orderId: orderIdOf(request.params, account, request.pathParams) };
  const finish = (outcome: Outcome): Outcome => {
    if (deps.faults.fire('drop_response', target)) {
      deps.counters.fault('drop_response');
      return { ...outcome, drop: true };
    }
    return outcome;
  };

  if (key !== null && key.length > MAX_KEY_LENGTH) return finish(answerError(idempotencyKeyTooLong(key.length)));

  const failure = deps.faults.fire('fail_before_execution', target);
  if (failure) {
    deps.counters.fault('fail_before_execution');
    // Nothing ran, so a retry is safe; Stripe says so for 500s with Stripe-Should-Retry.
    return failure.status === 429
      ? answerError(rateLimited())
      : answer(500, internalError().envelope(), { 'stripe-should-retry': 'true' });
  }

  const endpointName = `${request.method} ${endpoint.path.replace(/:(\w+)/g, (_, name: string) => request.pathParams[name] ?? name)}`;
  const paramsFingerprint = fingerprint(request.params);
  if (key !== null) {
    const found = deps.idempotency.lookup(account.id, key, endpointName, paramsFingerprint);
    switch (found.kind) {
      case 'replay':
        deps.counters.replay();
        return finish(replay(found.response, baseHeaders, key));
      case 'in_use':
        deps.counters.keyInUse();
        return finish(answerError(idempotencyKeyInUse(key)));
      case 'endpoint_mismatch':
        deps.counters.idempotencyError();
        return finish(answerError(idempotencyEndpointMismatch(key, found.originalEndpoint, endpointName)));
      case 'params_mismatch':
        deps.counters.idempotencyError();
        return finish(answerError(idempotencyParamsMismatch(key)));
      case 'absent':
        break;
    }
  }

  const ctx: RequestContext = {
    account,
    params: request.params,
    pathParams: request.pathParams,
    requestId,
    idempotencyKey: key,
    clock: deps.clock,
    settlements: deps.settlements,
    webhookEndpoints: deps.webhookEndpoints,
    authorizationWindowMs: deps.authorizationWindowMs,
    counters: deps.counters,
  };
  let execution: Execution;
  try {
    execution = endpoint.prepare(ctx);
  } catch (error) {
    if (error instanceof ApiError) return finish(answerError(error));
    throw error;
  }

  // From here on the request has begun executing: whatever it answers is saved under the key.
  const reservation: Reservation | null =
    key === null ? null : deps.idempotency.reserve(account.id, key, endpointName, paramsFingerprint);
  let outcome: Outcome;
  try {
    outcome = await execute(deps, target, execution, answer, answerError);
  } catch (error) {
    outcome = answerError(internalError(error instanceof Error ? error.message : undefined));
  }
  reservation?.complete({ status: outcome.status, body: outcome.body, headers: pickSaved(outcome.headers), requestId });
  return finish(outcome);
}

async function execute(
  deps: PipelineDeps,
  target: FaultTarget,
  execution: Execution,
  answer: (status: number, body: unknown, extra?: Readonly<Record<string, string>>) => Outcome,
  answerError: (error: ApiError) => Outcome,
): Promise<Outcome> {
  const latency = deps.faults.fire('latency', target);
  if (latency) {
    deps.counters.fault('latency');
    await sleep(latency.latencyMs);
  }
  if (deps.faults.fire('fail_during_execution', target)) {
    deps.counters.fault('fail_during_execution');
    // Saved like any executed answer, so a retry replays it; Stripe marks such 500s not to retry.
    return answer(500, internalError().envelope(), { 'stripe-should-retry': 'false' });
  }
  try {
    return answer(200, execution());
  } catch (error) {
    if (error instanceof ApiError) return answerError(error);
    throw error;
  }
}

/** Headers that belong to the answer itself, not to the request that carried it. */
function pickSaved(headers: Readonly<Record<string, string>>): Record<string, string> {
  const saved: Record<string, string> = {};
  const retry = headers['stripe-should-retry'];
  if (retry !== undefined) saved['stripe-should-retry'] = retry;
  return saved;
}

function replay(saved: SavedResponse, baseHeaders: Readonly<Record<string, string>>, key: string): Outcome {
  return {
    status: saved.status,
    body: saved.body,
    headers: {
      ...baseHeaders,
      ...saved.headers,
      'idempotent-replayed': 'true',
      'original-request': saved.requestId,
    },
    idempotencyKey: key,
    replayed: true,
    drop: false,
  };
}
