/**
 * The orders API's checks of its caller, as one preHandler on each route: the tenant its bearer
 * key resolved to (bearer auth, an onRequest hook, refuses unknown and revoked keys before any
 * body is read) and, on an idempotent POST, the Idempotency-Key parsed and checked. The handler
 * then reads them, typed, from `request.caller`.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { TenantIdempotencyKey } from '../idempotency/api-idempotency-store.js';
import { parseIdempotencyKeyHeader } from '../idempotency/idempotency-key-header.js';

/** Who calls: the tenant, and the Idempotency-Key on the routes that take one (null elsewhere). */
export interface Caller {
  tenantId: string;
  idempotencyKey: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the checkCaller preHandler, on the routes that have it. */
    caller?: Caller;
  }
}

/**
 * The preHandler. With `idempotencyKey`, a missing or malformed key is refused with 400
 * invalid_idempotency_key, saying what is wrong, before anything is claimed or started. It runs
 * after the body and params are validated, where the header's zod schema used to be checked
 * (fastify validates params, body, querystring, then headers), so which error a request with
 * several faults gets is unchanged.
 */
export function checkCaller(needs: { idempotencyKey: boolean }) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const tenantId = request.tenantId;
    if (!tenantId) {
      done(new Error('bearer auth did not set the tenant'));
      return;
    }
    if (!needs.idempotencyKey) {
      request.caller = { tenantId, idempotencyKey: null };
      done();
      return;
    }
    const key = parseIdempotencyKeyHeader(request.headers['idempotency-key']);
    if (!key.ok) {
      // Answered here, so the route's handler does not run (done is not called).
      void reply.code(400).send({ error: 'invalid_idempotency_key', message: key.message });
      return;
    }
    request.caller = { tenantId, idempotencyKey: key.key };
    done();
  };
}

/** The checked caller of a route that has the checkCaller preHandler. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error(`route ${request.routeOptions.url ?? request.url} has no checkCaller preHandler`);
  return request.caller;
}

/** The key's scope on an idempotent POST: the caller's tenant, the operation and the checked key. */
export function idempotencyScopeOf(request: FastifyRequest, operation: string): TenantIdempotencyKey {
  const { tenantId, idempotencyKey } = callerOf(request);
  if (idempotencyKey === null) throw new Error(`route ${request.routeOptions.url ?? request.url} does not check an Idempotency-Key`);
  return { tenantId, operation, key: idempotencyKey };
}
