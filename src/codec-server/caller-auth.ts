// Who is asking the codec server: a caller proves it with a bearer token, the static one in
// development, or the Web UI's access token (a JWT signed by the identity provider) in production.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { CodecServerAuth } from './settings.js';

/** The caller, for the audit log: never a token. */
export interface Caller {
  subject: string;
}

/** Resolves the caller of a bearer token, or null when the token proves nothing. */
export type Authenticate = (token: string) => Promise<Caller | null>;

const digest = (value: string) => createHash('sha256').update(value).digest();

export function authenticatorFor(auth: CodecServerAuth): Authenticate {
  if (auth.kind === 'static-token') {
    // Compared as digests, in constant time: the length of a wrong guess tells nothing either.
    const expected = digest(auth.token);
    return (token) => Promise.resolve(timingSafeEqual(digest(token), expected) ? { subject: 'static-token' } : null);
  }
  const keys = createRemoteJWKSet(new URL(auth.jwksUrl));
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer: auth.issuer, audience: auth.audience });
      const subject = typeof payload.email === 'string' ? payload.email : payload.sub;
      return subject ? { subject } : null;
    } catch {
      return null;
    }
  };
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer ([^\s]+)$/i.exec(header?.trim() ?? '');
  return match?.[1] ?? null;
}
