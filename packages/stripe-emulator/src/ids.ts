// Random identifiers shaped like Stripe's: object IDs with their type prefix, PaymentIntent client
// secrets and webhook signing secrets.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  // 256 is not a multiple of 62; the slight bias is irrelevant for identifiers.
  return Array.from(bytes, (byte) => ALPHABET.charAt(byte % ALPHABET.length)).join('');
}

export type IdPrefix = 'pi' | 'ch' | 're' | 'dp' | 'issfr' | 'evt' | 'req' | 'txn' | 'acct' | 'we';

/** Identifiers shaped like Stripe's: a type prefix and 24 base-62 characters. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken(prefix === 'req' ? 14 : 24)}`;
}

export function newClientSecret(paymentIntentId: string): string {
  return `${paymentIntentId}_secret_${randomToken(25)}`;
}

/** A webhook endpoint's signing secret, shaped like Stripe's `whsec_...`. */
export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}
