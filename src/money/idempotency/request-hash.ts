// The request hash stored beside every key: what tells a retry (same hash) from a key reused
// for another intent (I7).
import { createHash } from 'node:crypto';
import { configure } from 'safe-stable-stringify';

// Keys sorted, undefined dropped, and anything that is not plain JSON refused loudly, so two
// equal intents always hash alike and nothing silently hashes as something else.
const canonicalJson = configure({ deterministic: true, strict: true, circularValue: Error });

/** SHA-256 of the request's canonical JSON: field order does not matter, any value does. */
export function requestHash(request: object): string {
  const canonical = canonicalJson(request);
  return createHash('sha256').update(canonical).digest('hex');
}
