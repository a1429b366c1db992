// The registry of webhook endpoints (from the Stripe API or the control API), which endpoints
// take an event, and Stripe's WebhookEndpoint object.
import type Stripe from 'stripe';
import { z } from 'zod';
import type { Clock } from './clock.js';
import { EMULATED_API_VERSION } from './events.js';
import { newId, newWebhookSecret } from './ids.js';

/** Where events go, and the secret their signatures are made with. */
export interface WebhookEndpointRecord {
  id: string;
  url: string;
  secret: string;
  /** Event types delivered here; `*` is every type. */
  enabledEvents: string[];
  /** The account whose events it receives; null (control API and programmatic) is every account. */
  accountId: string | null;
  created: number;
  description: string | null;
  metadata: Record<string, string>;
}

export const webhookEndpointInputSchema = z.strictObject({
  url: z.url({ error: 'url must be an http(s) URL, e.g. http://127.0.0.1:3000/webhooks/stripe', protocol: /^https?$/ }),
  /** Stripe generates the secret; a caller may fix it (e.g. to the receiver's STRIPE_WEBHOOK_SECRET). */
  secret: z
    .string()
    .regex(/^whsec_\S{8,}$/, 'secret must look like whsec_ followed by at least 8 characters')
    .optional(),
  enabledEvents: z.array(z.string().min(1)).min(1).default(['*']),
  description: z.string().nullable().default(null),
});

export type WebhookEndpointInput = z.input<typeof webhookEndpointInputSchema>;

/** The endpoints events are delivered to, across accounts. */
export class WebhookEndpointRegistry {
  readonly #endpoints = new Map<string, WebhookEndpointRecord>();

  constructor(private readonly clock: Clock) {}

  add(input: WebhookEndpointInput, accountId: string | null = null, metadata: Record<string, string> = {}): WebhookEndpointRecord {
    const spec = webhookEndpointInputSchema.parse(input);
    const record: WebhookEndpointRecord = {
      id: newId('we'),
      url: spec.url,
      secret: spec.secret ?? newWebhookSecret(),
      enabledEvents: spec.enabledEvents,
      accountId,
      created: this.clock.nowSeconds(),
      description: spec.description,
      metadata,
    };
    this.#endpoints.set(record.id, record);
    return structuredClone(record);
  }

  remove(id: string): boolean {
    return this.#endpoints.delete(id);
  }

  get(id: string): WebhookEndpointRecord | undefined {
    return this.#endpoints.get(id);
  }

  list(accountId?: string): WebhookEndpointRecord[] {
    return [...this.#endpoints.values()]
      .filter((endpoint) => accountId === undefined || endpoint.accountId === accountId)
      .map((endpoint) => structuredClone(endpoint));
  }

  /** Endpoints that take this account's events of this type. */
  matching(accountId: string, eventType: string): WebhookEndpointRecord[] {
    return [...this.#endpoints.values()].filter(
      (endpoint) =>
        (endpoint.accountId === null || endpoint.accountId === accountId) &&
        (endpoint.enabledEvents.includes('*') || endpoint.enabledEvents.includes(eventType)),
    );
  }

  clear(): void {
    this.#endpoints.clear();
  }
}

/** Stripe's WebhookEndpoint object; `secret` appears only in the answer to create. */
export function webhookEndpointObject(record: WebhookEndpointRecord, withSecret: boolean): Stripe.WebhookEndpoint {
  return {
    id: record.id,
    object: 'webhook_endpoint',
    api_version: EMULATED_API_VERSION,
    application: null,
    created: record.created,
    description: record.description,
    enabled_events: [...record.enabledEvents],
    livemode: false,
    metadata: { ...record.metadata },
    ...(withSecret && { secret: record.secret }),
    status: 'enabled',
    url: record.url,
  };
}
