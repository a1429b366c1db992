// The `Stripe-Signature` header webhook deliveries carry, computed as Stripe computes it.
import { createHmac } from 'node:crypto';

/**
 * Stripe's webhook signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
 * keyed with the endpoint's whole `whsec_...` secret as UTF-8 (not base64-decoded). The official
 * SDKs' `webhooks.constructEvent` verify exactly this.
 */
export function signatureHeader(payload: string, secret: string, timestampSeconds: number): string {
  const signature = createHmac('sha256', secret).update(`${timestampSeconds}.${payload}`, 'utf8').digest('hex');
  return `t=${timestampSeconds},v1=${signature}`;
}
