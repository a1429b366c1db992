// Webhook delivery: POSTs each recorded event, signed, to the endpoints that take it, retries
// failures with exponential backoff, applies the webhook faults and logs every attempt.
import type { Clock } from './clock.js';
import type { Counters } from './counters.js';
import type { EmulatedEvent } from './events.js';
import type { FaultInjector, WebhookFaultTarget } from './faults.js';
import type { AccountState } from './store.js';
import type { WebhookEndpointRecord, WebhookEndpointRegistry } from './webhooks-endpoints.js';
import { signatureHeader } from './webhooks-signature.js';

export interface WebhookDeliveryOptions {
  /** Wait before the first retry; it doubles with each further attempt, up to `retryMaxMs`. */
  retryInitialMs: number;
  retryMaxMs: number;
  /** Attempts per delivery, the first included, before it is abandoned. */
  maxAttempts: number;
  /** How long one attempt waits for the endpoint's answer before it counts as failed. */
  timeoutMs: number;
}

/**
 * Stripe retries for up to three days; an emulator that did would outlive every test. These
 * keep the shape (exponential backoff, a bounded number of attempts) at a scale a run can watch.
 */
export const DEFAULT_WEBHOOK_DELIVERY: WebhookDeliveryOptions = {
  retryInitialMs: 1_000,
  retryMaxMs: 60_000,
  maxAttempts: 10,
  timeoutMs: 10_000,
};

/** One POST to one endpoint, as the delivery log records it. */
export interface WebhookAttempt {
  eventId: string;
  eventType: string;
  endpointId: string;
  url: string;
  attempt: number;
  /** True for the extra copies the webhook_duplicate fault sends. */
  duplicate: boolean;
  /** The endpoint's HTTP status; null when no answer came (refused, reset, timed out). */
  status: number | null;
  error: string | null;
  /** Emulator time of the attempt, ms since the epoch. */
  at: number;
}

interface Delivery {
  event: EmulatedEvent;
  endpoint: WebhookEndpointRecord;
  duplicate: boolean;
  /** Further copies to send once this delivery succeeded. */
  copiesLeft: number;
  /** Held by the reorder fault: its completion must not release other held events. */
  wasHeld: boolean;
}

interface DispatcherDeps {
  endpoints: WebhookEndpointRegistry;
  faults: FaultInjector;
  counters: Counters;
  clock: Clock;
}

/**
 * Delivers recorded events to the endpoints that take them, signed as Stripe signs them, retrying
 * a non-2xx answer, a timeout or a refused connection with exponential backoff. Deliveries run
 * independently, so, as on Stripe, nothing orders them; the webhook faults add duplicates, hold
 * an event back until the next one went out, or delay one.
 */
export class WebhookDispatcher {
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #inFlight = new Set<AbortController>();
  /** Per endpoint: starts of deliveries the reorder fault holds back. */
  readonly #held = new Map<string, (() => void)[]>();
  readonly #attempts: WebhookAttempt[] = [];
  #unfinished = 0;
  #idleWaiters: (() => void)[] = [];
  /** Bumped by reset and close, so callbacks of an earlier life do nothing. */
  #generation = 0;
  #options: WebhookDeliveryOptions;

  constructor(
    private readonly deps: DispatcherDeps,
    options: Partial<WebhookDeliveryOptions> = {},
  ) {
    this.#options = { ...DEFAULT_WEBHOOK_DELIVERY, ...options };
  }

  get options(): WebhookDeliveryOptions {
    return { ...this.#options };
  }

  configure(options: Partial<WebhookDeliveryOptions>): WebhookDeliveryOptions {
    this.#options = { ...this.#options, ...options };
    return this.options;
  }

  /** Called for every recorded event: fans it out to the endpoints that take it. */
  enqueue(account: AccountState, event: EmulatedEvent): void {
    const endpoints = this.deps.endpoints.matching(account.id, event.type);
    event.pending_webhooks = endpoints.length;
    const orderId = orderIdOf(account, event);
    for (const endpoint of endpoints) this.#start(event, endpoint, orderId);
  }

  /** Every attempt so far, oldest first. */
  attempts(): WebhookAttempt[] {
    return structuredClone(this.#attempts);
  }

  /** Resolves once no delivery is waiting, held, in flight or due for a retry. */
  idle(): Promise<void> {
    if (this.#unfinished === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Drops every pending delivery, retry and hold, and forgets the log. */
  reset(): void {
    this.#generation += 1;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const controller of this.#inFlight) controller.abort();
    this.#inFlight.clear();
    this.#held.clear();
    this.#attempts.length = 0;
    this.#unfinished = 0;
    this.#notifyIdle();
  }

  #start(event: EmulatedEvent, endpoint: WebhookEndpointRecord, orderId: string | undefined): void {
    const target: WebhookFaultTarget = { eventType: event.type, orderId };
    const { faults, counters } = this.deps;
    const reorder = faults.fireWebhook('webhook_reorder', target);
    const delay = reorder ? undefined : faults.fireWebhook('webhook_delay', target);
    const duplicate = faults.fireWebhook('webhook_duplicate', target);
    if (reorder) counters.fault('webhook_reorder');
    if (delay) counters.fault('webhook_delay');
    if (duplicate) counters.fault('webhook_duplicate');

    const delivery: Delivery = { event, endpoint, duplicate: false, copiesLeft: duplicate?.copies ?? 0, wasHeld: reorder !== undefined };
    this.#unfinished += 1;
    const begin = () => {
      this.#attempt(delivery, 1);
    };
    if (reorder) this.#hold(endpoint.id, begin, reorder.holdMs);
    else if (delay) this.#after(delay.delayMs, begin);
    else begin();
  }

  /** Holds a delivery until the next one to the endpoint has been tried, or `holdMs` passed. */
  #hold(endpointId: string, begin: () => void, holdMs: number): void {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      begin();
    };
    const queue = this.#held.get(endpointId) ?? [];
    queue.push(release);
    this.#held.set(endpointId, queue);
    this.#after(holdMs, () => {
      const waiting = this.#held.get(endpointId);
      if (waiting) this.#held.set(endpointId, waiting.filter((held) => held !== release));
      release();
    });
  }

  #releaseHeld(endpointId: string): void {
    const waiting = this.#held.get(endpointId);
    if (!waiting) return;
    this.#held.delete(endpointId);
    for (const release of waiting) release();
  }

  #attempt(delivery: Delivery, attempt: number): void {
    void this.#send(delivery, attempt);
  }

  async #send(delivery: Delivery, attempt: number): Promise<void> {
    const generation = this.#generation;
    const { counters, clock } = this.deps;
    const { event, endpoint } = delivery;
    // Serialised per attempt, as Stripe does: pending_webhooks is what it is at that moment.
    const payload = JSON.stringify(event, null, 2);
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const timeout = setTimeout(() => {
      controller.abort(new Error(`no answer within ${this.#options.timeoutMs} ms`));
    }, this.#options.timeoutMs);
    counters.webhook('deliveries');
    if (attempt > 1) counters.webhook('retries');

    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': signatureHeader(payload, endpoint.secret, clock.nowSeconds()),
        },
        body: payload,
        signal: controller.signal,
      });
      status = response.status;
      await response.arrayBuffer();
    } catch (caught) {
      error = describeError(caught);
    } finally {
      clearTimeout(timeout);
      this.#inFlight.delete(controller);
    }
    if (generation !== this.#generation) return;

    this.#attempts.push({
      eventId: event.id,
      eventType: event.type,
      endpointId: endpoint.id,
      url: endpoint.url,
      attempt,
      duplicate: delivery.duplicate,
      status,
      error,
      at: clock.nowMs(),
    });
    // "Hold an event until the next one went out": the next one has now been tried.
    if (attempt === 1 && !delivery.duplicate && !delivery.wasHeld) this.#releaseHeld(endpoint.id);

    const succeeded = status !== null && status >= 200 && status < 300;
    if (succeeded) {
      counters.webhook('succeeded');
      if (!delivery.duplicate) event.pending_webhooks = Math.max(0, event.pending_webhooks - 1);
      if (delivery.copiesLeft > 0) {
        counters.webhook('duplicates');
        this.#unfinished += 1;
        this.#attempt({ ...delivery, duplicate: true, copiesLeft: delivery.copiesLeft - 1 }, 1);
      }
      this.#finish();
      return;
    }
    counters.webhook('failedAttempts');
    if (attempt >= this.#options.maxAttempts) {
      counters.webhook('abandoned');
      this.#finish();
      return;
    }
    const backoff = Math.min(this.#options.retryMaxMs, this.#options.retryInitialMs * 2 ** (attempt - 1));
    this.#after(backoff, () => {
      this.#attempt(delivery, attempt + 1);
    });
  }

  #after(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
  }

  #finish(): void {
    this.#unfinished = Math.max(0, this.#unfinished - 1);
    if (this.#unfinished === 0) this.#notifyIdle();
  }

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/**
 * The order an event is about, for webhook faults that name one: its object's `metadata.order_id`,
 * or, for objects that carry none of their own (disputes, early fraud warnings), that of the
 * PaymentIntent they are about.
 */
function orderIdOf(account: AccountState, event: EmulatedEvent): string | undefined {
  const object = event.data.object;
  if (object.object === 'dispute' || object.object === 'radar.early_fraud_warning') {
    const own = object.object === 'dispute' ? object.metadata.order_id : undefined;
    const paymentIntent = typeof object.payment_intent === 'string' ? account.paymentIntents.get(object.payment_intent) : undefined;
    return own ?? paymentIntent?.metadata.order_id;
  }
  return object.metadata?.order_id;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch reports "fetch failed" and keeps the reason (ECONNREFUSED, a reset) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
