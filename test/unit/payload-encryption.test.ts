// Proves the payload codec: a round trip restores each payload exactly, every payload gets a fresh
// nonce and names its key ID, and an unknown key, a flipped tag, a truncated body, a relabelled
// key ID fail with an error naming the key ID, never returning plain text; a payload written
// unencrypted (by the server itself, or before the upgrade) is passed on as it was.
// Also the settings: where keys come from, and production's refusal to start without one.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ENCRYPTED_ENCODING, EncryptionCodec, METADATA, PayloadDecryptionError } from '../../src/platform/temporal/payload-encryption/encryption-codec.js';
import { PayloadKeyRing, DEVELOPMENT_KEY_ID } from '../../src/platform/temporal/payload-encryption/key-ring.js';
import { UnknownPayloadKeyError } from '../../src/platform/temporal/payload-encryption/key-provider.js';
import { loadPayloadEncryptionSettings } from '../../src/platform/temporal/payload-encryption/settings.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring = (current: string, keys: Record<string, Buffer> = { k1, k2 }) => new PayloadKeyRing(keys, current);
const order = { orderId: 'O-1', customerId: 'cust-secret-42', paymentMethod: 'pm_card_visa', amount: 123_456 };
const plain = (): Payload[] => [defaultPayloadConverter.toPayload(order), defaultPayloadConverter.toPayload(undefined), defaultPayloadConverter.toPayload('x')];
const str = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('EncryptionCodec', () => {
  it('round-trips every payload exactly, metadata included, and hides the data', async () => {
    const codec = new EncryptionCodec(ring('k1'));
    const encoded = await codec.encode(plain());
    for (const payload of encoded) {
      expect(str(payload.metadata?.[METADATA.encoding])).toBe(ENCRYPTED_ENCODING);
      expect(str(payload.metadata?.[METADATA.keyId])).toBe('k1');
      expect(str(payload.data)).not.toContain('cust-secret-42');
      expect(str(payload.data)).not.toContain('json/plain');
    }
    const decoded = await codec.decode(encoded);
    expect(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual([order, undefined, 'x']);
    expect(decoded.map((payload) => str(payload.metadata?.encoding))).toEqual(['json/plain', 'binary/null', 'json/plain']);
  });

  it('uses a fresh nonce per payload: the same value twice seals to different bytes', async () => {
    const codec = new EncryptionCodec(ring('k1'));
    const [a, b] = await codec.encode([defaultPayloadConverter.toPayload(order), defaultPayloadConverter.toPayload(order)]);
    expect(Buffer.from(a?.data ?? []).subarray(0, 12).equals(Buffer.from(b?.data ?? []).subarray(0, 12))).toBe(false);
    expect(Buffer.from(a?.data ?? []).equals(Buffer.from(b?.data ?? []))).toBe(false);
  });

  it('writes under the current key and reads any key still in the ring', async () => {
    const underK1 = await new EncryptionCodec(ring('k1')).encode(plain());
    const rotated = new EncryptionCodec(ring('k2'));
    const underK2 = await rotated.encode(plain());
    expect(str(underK2[0]?.metadata?.[METADATA.keyId])).toBe('k2');
    expect(defaultPayloadConverter.fromPayload((await rotated.decode(underK1))[0] as Payload)).toEqual(order);
  });

  it('an unknown key ID fails naming it', async () => {
    const encoded = await new EncryptionCodec(ring('k1')).encode(plain());
    const withoutK1 = new EncryptionCodec(ring('k2', { k2 }));
    await expect(withoutK1.decode(encoded)).rejects.toThrow(UnknownPayloadKeyError);
    await expect(withoutK1.decode(encoded)).rejects.toThrow(/key 'k1'/);
  });

  it('a flipped tag, a flipped ciphertext byte, a truncated body or a relabelled key ID fail naming the key ID', async () => {
    const codec = new EncryptionCodec(ring('k1'));
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(order)]);
    if (!sealed?.data) throw new Error('no data');
    const flip = (index: number) => {
      const data = Buffer.from(sealed.data ?? []);
      data[index] = (data[index] ?? 0) ^ 1;
      return { ...sealed, data };
    };
    for (const broken of [flip(sealed.data.length - 1), flip(20), { ...sealed, data: sealed.data.subarray(0, sealed.data.length - 5) }, { ...sealed, data: sealed.data.subarray(0, 10) }]) {
      const failure = await codec.decode([broken]).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PayloadDecryptionError);
      expect((failure as Error).message).toMatch(/key 'k1'/);
      expect((failure as Error).message).not.toContain('cust-secret-42');
    }
    const relabelled = { ...sealed, metadata: { ...sealed.metadata, [METADATA.keyId]: Buffer.from('k2') } };
    await expect(codec.decode([relabelled])).rejects.toThrow(/key 'k2' not decrypted: the authentication tag does not match/);
  });

  it('a payload written unencrypted (by the server, or before the upgrade) is passed on as it is; one claiming encryption with no key ID fails', async () => {
    const codec = new EncryptionCodec(ring('k1'));
    expect(await codec.decode(plain())).toEqual(plain());
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(order)]);
    const unnamed = { ...sealed, metadata: { [METADATA.encoding]: Buffer.from(ENCRYPTED_ENCODING) } };
    await expect(codec.decode([unnamed])).rejects.toThrow(/names no encryption-key-id/);
  });
});

describe('payload encryption settings', () => {
  const b64 = (key: Buffer) => key.toString('base64');

  it('reads PAYLOAD_KEYS with PAYLOAD_KEY_CURRENT, or a key file; the only key is current', () => {
    const fromList = loadPayloadEncryptionSettings({ PAYLOAD_KEYS: `k1=${b64(k1)}, k2=${b64(k2)}`, PAYLOAD_KEY_CURRENT: 'k2' });
    expect(fromList.keys.describe()).toBe('key ring: k1, k2; current k2');
    expect(loadPayloadEncryptionSettings({ PAYLOAD_KEYS: `k1=${b64(k1)}` }).keys.describe()).toBe('key ring: k1; current k1');
    const file = fileURLToPath(new URL('../fixtures/keys/TEST-ONLY-payload-keys.json', import.meta.url));
    expect(loadPayloadEncryptionSettings({ PAYLOAD_KEYS_FILE: file }).keys.describe()).toBe('key ring: test-only-1; current test-only-1');
  });

  it('outside production an unconfigured process uses the development ring; production refuses to start naming PAYLOAD_KEYS', () => {
    expect(loadPayloadEncryptionSettings({}).keys.describe()).toContain(DEVELOPMENT_KEY_ID);
    expect(() => loadPayloadEncryptionSettings({ NODE_ENV: 'production' })).toThrow(/PAYLOAD_KEYS: is required with NODE_ENV=production/);
    expect(() => loadPayloadEncryptionSettings({ NODE_ENV: 'production', PAYLOAD_KEYS: ' ' })).toThrow(/PAYLOAD_KEYS: is required/);
  });

  it('refuses short keys, several keys with no current one, a current key not in the ring, and both sources at once', () => {
    expect(() => loadPayloadEncryptionSettings({ PAYLOAD_KEYS: `k1=${b64(randomBytes(16))}` })).toThrow(/key 'k1' must be the base64 of exactly 32 bytes, got 16/);
    expect(() => loadPayloadEncryptionSettings({ PAYLOAD_KEYS: 'k1' })).toThrow(/each entry must be <key ID>=<base64/);
    expect(() => loadPayloadEncryptionSettings({ PAYLOAD_KEYS: `k1=${b64(k1)},k2=${b64(k2)}` })).toThrow(/PAYLOAD_KEY_CURRENT: is required when PAYLOAD_KEYS holds several keys/);
    expect(() => loadPayloadEncryptionSettings({ PAYLOAD_KEYS: `k1=${b64(k1)}`, PAYLOAD_KEY_CURRENT: 'k9' })).toThrow(/'k9' is not in PAYLOAD_KEYS/);
    expect(() => loadPayloadEncryptionSettings({ PAYLOAD_KEYS: `k1=${b64(k1)}`, PAYLOAD_KEYS_FILE: '/x.json' })).toThrow(/set one of them, not both/);
    expect(() => loadPayloadEncryptionSettings({ PAYLOAD_KEYS_FILE: '/nonexistent/keys.json' })).toThrow(/PAYLOAD_KEYS_FILE: cannot read/);
  });
});
