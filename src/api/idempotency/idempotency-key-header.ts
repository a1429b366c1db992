/** Visible ASCII only: keys travel in an HTTP header and are compared byte for byte. */
const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

export const IDEMPOTENCY_KEY_CONTRACT =
  'send an Idempotency-Key header of 1 to 255 visible ASCII characters (a UUID is ideal), unique per intent: ' +
  'retry with the same key and the same body to get the first response back; never reuse a key for a different request';

export type IdempotencyKeyParse = { ok: true; key: string } | { ok: false; message: string };

/** Parses the Idempotency-Key header, saying what is wrong with a bad one. */
export function parseIdempotencyKeyHeader(value: string | string[] | undefined): IdempotencyKeyParse {
  if (value === undefined) return { ok: false, message: `Idempotency-Key header is missing: ${IDEMPOTENCY_KEY_CONTRACT}` };
  if (Array.isArray(value)) return { ok: false, message: `Idempotency-Key header was sent more than once: ${IDEMPOTENCY_KEY_CONTRACT}` };
  if (value.length === 0) return { ok: false, message: `Idempotency-Key header is empty: ${IDEMPOTENCY_KEY_CONTRACT}` };
  if (value.length > 255) {
    return { ok: false, message: `Idempotency-Key header is ${value.length} characters, more than 255: ${IDEMPOTENCY_KEY_CONTRACT}` };
  }
  if (!KEY_PATTERN.test(value)) {
    return { ok: false, message: `Idempotency-Key header has spaces or non-ASCII characters: ${IDEMPOTENCY_KEY_CONTRACT}` };
  }
  return { ok: true, key: value };
}
