// The payload codec of every client and worker: each payload is sealed whole (its metadata and
// data, as the protobuf Payload) with AES-256-GCM under the provider's current key and a fresh
// random 12-byte nonce. The result names its key ID in metadata, and the key ID is authenticated
// with the ciphertext, so a payload relabelled with another key's ID fails like a tampered one.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { PayloadKeyProvider } from './key-provider.js';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const METADATA = {
  encoding: 'encoding',
  keyId: 'encryption-key-id',
  cipher: 'encryption-cipher',
  wrappedKey: 'encryption-wrapped-key',
} as const;
export const CIPHER = 'AES-256-GCM';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const ProtoPayload = proto.temporal.api.common.v1.Payload;
const utf8 = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : undefined);

/** A payload the codec will not open: names the key ID (never the data) and why. */
export class PayloadDecryptionError extends Error {
  override readonly name = 'PayloadDecryptionError';
  constructor(
    readonly keyId: string | undefined,
    reason: string,
  ) {
    super(keyId === undefined ? `payload not decrypted: ${reason}` : `payload encrypted with key '${keyId}' not decrypted: ${reason}`);
  }
}

export class EncryptionCodec implements PayloadCodec {
  constructor(readonly keys: PayloadKeyProvider) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    if (payloads.length === 0) return payloads;
    const key = await this.keys.encryptionKey();
    const aad = utf8(key.id);
    return payloads.map((payload) => {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key.key, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(aad);
      const sealed = Buffer.concat([nonce, cipher.update(ProtoPayload.encode(payload).finish()), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: {
          [METADATA.encoding]: utf8(ENCRYPTED_ENCODING),
          [METADATA.keyId]: aad,
          [METADATA.cipher]: utf8(CIPHER),
          ...(key.wrapped && { [METADATA.wrappedKey]: key.wrapped }),
        },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.decodeOne(payload)));
  }

  private async decodeOne(payload: Payload): Promise<Payload> {
    const metadata = payload.metadata ?? {};
    // A payload this codec did not write is passed on as it is: the server writes some itself
    // (an activity cancelled before it started gets "ACTIVITY_ID_NOT_STARTED"), and runs started
    // before encryption was turned on hold nothing else. It was never secret, so nothing is
    // revealed; what fails closed is every payload that says it is encrypted (docs/encryption.md).
    if (text(metadata[METADATA.encoding]) !== ENCRYPTED_ENCODING) return payload;
    const keyId = text(metadata[METADATA.keyId]);
    if (!keyId) throw new PayloadDecryptionError(undefined, `its metadata names no ${METADATA.keyId}`);
    const cipherName = text(metadata[METADATA.cipher]);
    if (cipherName !== CIPHER) throw new PayloadDecryptionError(keyId, `unsupported cipher '${cipherName ?? 'none'}'`);
    const data = payload.data ?? new Uint8Array();
    if (data.length < NONCE_BYTES + TAG_BYTES) throw new PayloadDecryptionError(keyId, `the body is truncated (${data.length} bytes)`);
    const key = await this.keys.decryptionKey(keyId, metadata[METADATA.wrappedKey] ?? undefined);
    const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const decipher = createDecipheriv('aes-256-gcm', key.key, body.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(utf8(keyId));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(keyId, 'the authentication tag does not match (wrong key, or the payload was altered or truncated)');
    }
    const decoded = ProtoPayload.decode(plain);
    return { metadata: decoded.metadata, data: decoded.data };
  }
}
