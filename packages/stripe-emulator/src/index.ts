/**
 * The package's public API, and the only module outside code may import
 * (`@order-payments/stripe-emulator`): startStripeEmulator, its options, the handle it returns and
 * the types and defaults a caller needs. Everything else in src/ is internal.
 */
import type { AddressInfo } from 'node:net';
import type { SettlementOutcome } from './async-settlement.js';
import type { CounterSnapshot } from './counters.js';
import type { DisputeOutcome } from './disputes.js';
import { EmulatorCore, type EventFilter, type StateDump } from './emulator.js';
import type { EmulatedEvent } from './events.js';
import type { FaultRule, FaultRuleInput } from './faults.js';
import { DEFAULT_RETENTION_MS } from './idempotency.js';
import type { RequestLogger } from './request-log.js';
import { buildServer } from './server.js';
import type { WebhookAttempt, WebhookDeliveryOptions } from './webhooks-delivery.js';
import type { WebhookEndpointInput } from './webhooks-endpoints.js';

export type { SettlementOutcome } from './async-settlement.js';
export { DEFAULT_ASYNC_SETTLE_MS } from './async-settlement.js';
export type { CounterSnapshot, PaymentCounters, WebhookCounters } from './counters.js';
export { DEFAULT_AUTHORIZATION_WINDOW_MS } from './holds.js';
export type { DisputeOutcome } from './disputes.js';
/** The fee a chargeback withdraws with its amount, and how long after it opens its evidence is due. */
export { DISPUTE_FEE, DISPUTE_RESPONSE_WINDOW_SECONDS } from './disputes.js';
export type { AccountDump, EventFilter, StateDump } from './emulator.js';
export type { EmulatedEvent, EmulatedEventType } from './events.js';
/** The Stripe API version the emulator speaks: its default Stripe-Version header and every event's api_version. */
export { EMULATED_API_VERSION } from './events.js';
export type { FaultRule, FaultRuleInput } from './faults.js';
/**
 * The seeded PRNG (mulberry32) that fault rules with a `probability` draw from; a chaos run seeds
 * its own choices with it too, so one seed replays the same run.
 */
export { seededRandom } from './seeded-random.js';
export type { RequestLogger, RequestLogLine } from './request-log.js';
export { CONTROL_PREFIX } from './control-api.js';
export { DEFAULT_RETENTION_MS } from './idempotency.js';
export type { WebhookAttempt, WebhookDeliveryOptions } from './webhooks-delivery.js';
export { DEFAULT_WEBHOOK_DELIVERY } from './webhooks-delivery.js';
export type { WebhookEndpointInput } from './webhooks-endpoints.js';
export { signatureHeader } from './webhooks-signature.js';

export interface StripeEmulatorOptions {
  /** 0 (the default) picks a free port; read it back from `url` or `port`. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** How long an idempotency key is remembered, on the emulator's clock. Default 24 hours. */
  retentionMs?: number;
  /** Receives one line per request (a pino logger fits). Omitted or false: silent. */
  logger?: RequestLogger | false;
  /** Wait before asynchronous payments (`pm_card_async_*`) and their refunds settle. Default 2 s. */
  asyncSettleMs?: number;
  /**
   * How long a manual-capture authorization can be captured (`capture_before` this far after the
   * authorization, on the emulator's clock). Default 7 days, Stripe's window for online cards.
   */
  authorizationWindowMs?: number;
  /** Webhook retry backoff, attempts and timeout. Defaults: DEFAULT_WEBHOOK_DELIVERY. */
  webhookDelivery?: Partial<WebhookDeliveryOptions>;
}

/** A webhook endpoint as listed: where it is, what it takes, and its signing secret. */
export interface WebhookEndpointInfo {
  id: string;
  url: string;
  secret: string;
  enabledEvents: string[];
}

export interface StripeEmulator {
  /** Base URL to hand to the SDK as STRIPE_API_BASE, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
  addFault(rule: FaultRuleInput): FaultRule;
  listFaults(): FaultRule[];
  removeFault(id: string): boolean;
  clearFaults(): void;
  /**
   * Moves the emulator's clock forward, letting holds whose `capture_before` it passes lapse;
   * returns the new time in ms since the epoch.
   */
  advanceClock(ms: number): number;
  now(): number;
  counters(): CounterSnapshot;
  events(filter?: EventFilter): EmulatedEvent[];
  state(): StateDump;
  /**
   * Forgets every object, key, event, counter, fault rule, webhook endpoint and pending delivery,
   * and resets the clock.
   */
  reset(): void;
  /**
   * Registers an endpoint for every account's events (all types unless `enabledEvents` says
   * otherwise) and returns its signing secret: the given one, or a fresh `whsec_...`.
   */
  addWebhookEndpoint(endpoint: WebhookEndpointInput): string;
  webhookEndpoints(): WebhookEndpointInfo[];
  removeWebhookEndpoint(id: string): boolean;
  /** Every delivery attempt so far, oldest first. */
  webhookAttempts(): WebhookAttempt[];
  /** Resolves once no webhook delivery is waiting, held, in flight or due for a retry. */
  webhooksIdle(): Promise<void>;
  configureWebhookDelivery(options: Partial<WebhookDeliveryOptions>): WebhookDeliveryOptions;
  /** Changes the wait before asynchronous payments and refunds settle (for those started later). */
  setAsyncSettleDelay(ms: number): void;
  /** Settles a processing PaymentIntent now; false if it is not processing. */
  settlePaymentIntent(paymentIntentId: string, outcome?: SettlementOutcome): boolean;
  /** Decides an open dispute now (won or lost), with its events; false if there is none or it is closed. */
  decideDispute(disputeId: string, outcome: DisputeOutcome): boolean;
}

export async function startStripeEmulator(options: StripeEmulatorOptions = {}): Promise<StripeEmulator> {
  const core = new EmulatorCore({
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
    asyncSettleMs: options.asyncSettleMs,
    authorizationWindowMs: options.authorizationWindowMs,
    webhookDelivery: options.webhookDelivery,
  });
  const app = buildServer(core, options.logger === undefined || options.logger === false ? null : options.logger);
  const host = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    close: () => app.close(),
    addFault: (rule) => core.faults.add(rule),
    listFaults: () => core.faults.list(),
    removeFault: (id) => core.faults.remove(id),
    clearFaults: () => {
      core.faults.clear();
    },
    advanceClock: (ms) => core.advanceClock(ms),
    now: () => core.clock.nowMs(),
    counters: () => core.counters.snapshot(),
    events: (filter) => core.events(filter),
    state: () => core.dump(),
    reset: () => {
      core.reset();
    },
    addWebhookEndpoint: (endpoint) => core.webhookEndpoints.add(endpoint).secret,
    webhookEndpoints: () =>
      core.webhookEndpoints.list().map(({ id, url, secret, enabledEvents }) => ({ id, url, secret, enabledEvents })),
    removeWebhookEndpoint: (id) => core.webhookEndpoints.remove(id),
    webhookAttempts: () => core.webhooks.attempts(),
    webhooksIdle: () => core.webhooks.idle(),
    configureWebhookDelivery: (delivery) => core.webhooks.configure(delivery),
    setAsyncSettleDelay: (ms) => {
      core.settlements.configure(ms);
    },
    settlePaymentIntent: (paymentIntentId, outcome) => core.settlePaymentIntent(paymentIntentId, outcome),
    decideDispute: (disputeId, outcome) => typeof core.decideDispute(disputeId, outcome) !== 'string',
  };
}
