// A static key ring: several AES-256 keys by ID, one of them current. New payloads are sealed with
// the current key; any key still in the ring opens the payloads written under it, which is what
// makes rotation a configuration change (docs/encryption.md, "Rotating a key").
import { createHash } from 'node:crypto';
import { UnknownPayloadKeyError, type DataKey, type PayloadKeyProvider } from './key-provider.js';

export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const KEY_BYTES = 32;

export class PayloadKeyRing implements PayloadKeyProvider {
  private readonly keys: ReadonlyMap<string, DataKey>;
  private readonly current: DataKey;

  constructor(keys: Record<string, Buffer>, currentId: string) {
    const entries = Object.entries(keys);
    for (const [id, key] of entries) {
      if (!KEY_ID_PATTERN.test(id)) throw new Error(`key ID '${id}' must be 1-64 letters, digits, '.', '-' or '_'`);
      if (key.length !== KEY_BYTES) throw new Error(`key '${id}' must be ${KEY_BYTES} bytes (AES-256), got ${key.length}`);
    }
    this.keys = new Map(entries.map(([id, key]) => [id, { id, key }]));
    const current = this.keys.get(currentId);
    if (!current) throw new Error(`the current key '${currentId}' is not in the ring (${this.describe()})`);
    this.current = current;
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  encryptionKey(): DataKey {
    return this.current;
  }

  decryptionKey(id: string): DataKey {
    const key = this.keys.get(id);
    if (!key) throw new UnknownPayloadKeyError(id, this.describe());
    return key;
  }

  describe(): string {
    return `key ring: ${this.keyIds.join(', ')}; current ${this.current.id}`;
  }
}

/**
 * The ring a development or test process uses when none is configured: one key derived from a
 * public phrase, so it protects nothing. Refused with NODE_ENV=production (settings.ts).
 */
export const DEVELOPMENT_KEY_ID = 'dev-insecure-1';
export function developmentKeyRing(): PayloadKeyRing {
  const key = createHash('sha256').update('temporal-idempotent-payments development payload key: public, not a secret').digest();
  return new PayloadKeyRing({ [DEVELOPMENT_KEY_ID]: key }, DEVELOPMENT_KEY_ID);
}

/** The development ring as PAYLOAD_KEYS would spell it, for a child process run in production mode by a test or bench. */
export function developmentKeyRingEnv(): { PAYLOAD_KEYS: string } {
  const ring = developmentKeyRing();
  return { PAYLOAD_KEYS: `${DEVELOPMENT_KEY_ID}=${ring.encryptionKey().key.toString('base64')}` };
}
