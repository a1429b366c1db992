// Stripe's authentication: the secret key from a Bearer or Basic Authorization header (test keys
// only, 401 otherwise), and keys redacted as Stripe's messages show them.
import { invalidApiKey, missingApiKey } from './errors.js';

/** Test-mode secret and restricted keys; the emulator has no live mode to protect. */
const ACCEPTED_KEY = /^(sk|rk)_test_[A-Za-z0-9_]+$/;

/** Shows a key the way Stripe's error messages do: its prefix and last four characters. */
export function redactKey(secretKey: string): string {
  if (secretKey.length <= 12) return `${secretKey.slice(0, 3)}****`;
  return `${secretKey.slice(0, 8)}****${secretKey.slice(-4)}`;
}

/**
 * Returns the secret key a request authenticates with. Stripe takes it as a Bearer token or as
 * the Basic-auth user name; a missing or malformed key is a 401, which is never saved.
 */
export function authenticate(authorization: string | undefined): string {
  const header = authorization?.trim() ?? '';
  let key: string | undefined;
  const [scheme = '', credentials = ''] = header.split(/\s+/, 2);
  if (scheme.toLowerCase() === 'bearer') {
    key = credentials;
  } else if (scheme.toLowerCase() === 'basic') {
    key = Buffer.from(credentials, 'base64').toString('utf8').split(':', 1)[0];
  }
  if (key === undefined || key === '') throw missingApiKey();
  if (!ACCEPTED_KEY.test(key)) throw invalidApiKey(redactKey(key));
  return key;
}
