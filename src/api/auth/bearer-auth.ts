// Bearer authentication for the orders API: an onRequest hook that refuses a missing, unknown,
// revoked or expired API key with 401, a key without the route's scope with 403, and sets the
// request's tenant.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { lookupApiKey, type ApiKeyScope } from './api-keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the bearer-auth hook on every authenticated route. */
    tenantId?: string;
  }
  interface FastifyContextConfig {
    /** The scope an API key needs for this route (migration 017); every orders route names one. */
    scope?: ApiKeyScope;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const CREATE_HINT = 'create one with: npm run api -- keys create --tenant <id>';

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated caller is refused
 * with 401 (and a key that lacks the route's scope with 403) before anything of theirs is parsed
 * or stored. A route without a scope is refused too: that is a wiring mistake, not an open door.
 */
export function bearerAuth(db: Pool) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = request.headers.authorization;
    const match = header ? BEARER.exec(header) : null;
    const key = match?.[1];
    if (!key) {
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: 'unauthorized', message: `send your API key as "Authorization: Bearer <key>" (${CREATE_HINT})` });
      return;
    }
    // Looked up on every request, never cached: a revoked key is refused on its next request.
    const found = await lookupApiKey(db, key);
    if (found.status === 'revoked') {
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer error="invalid_token", error_description="the API key was revoked"')
        .send({
          error: 'api_key_revoked',
          message: `the API key ${found.prefix}… was revoked at ${found.revokedAt.toISOString()}; use another key of this tenant (${CREATE_HINT})`,
        });
      return;
    }
    if (found.status === 'expired') {
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer error="invalid_token", error_description="the API key expired"')
        .send({
          error: 'api_key_expired',
          message: `the API key ${found.prefix}… expired at ${found.expiredAt.toISOString()}; use another key of this tenant (${CREATE_HINT})`,
        });
      return;
    }
    if (found.status === 'unknown') {
      await reply.code(401).header('www-authenticate', 'Bearer error="invalid_token"').send({ error: 'unauthorized', message: 'the API key is not recognised' });
      return;
    }
    const needed = request.routeOptions.config.scope;
    if (needed === undefined || !found.scopes.includes(needed)) {
      await reply
        .code(403)
        .header('www-authenticate', `Bearer error="insufficient_scope", scope="${needed ?? 'none'}"`)
        .send({
          error: 'insufficient_scope',
          message: `this API key may ${found.scopes.join(', ')}; this request needs ${needed ?? 'a scope the route does not name'} (${CREATE_HINT} --scopes ${needed ?? '...'})`,
        });
      return;
    }
    request.tenantId = found.tenantId;
  };
}
