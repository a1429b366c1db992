// The emulator's core: one object holding all its in-memory state (accounts, idempotency keys,
// faults, counters, clock, webhooks, settlements) and the operations on it beyond the Stripe API.
import type Stripe from 'stripe';
import { AsyncSettlement } from './async-settlement.js';
import { Clock } from './clock.js';
import { Counters, type CounterSnapshot } from './counters.js';
import { closePastDueDisputes, decideOpenDispute, type DisputeOutcome } from './disputes.js';
import type { EmulatedEvent } from './events.js';
import { FaultInjector, type FaultRule } from './faults.js';
import { DEFAULT_AUTHORIZATION_WINDOW_MS, lapseExpiredHolds } from './holds.js';
import { DEFAULT_RETENTION_MS, IdempotencyStore, type KeySummary } from './idempotency.js';
import type { PipelineDeps } from './pipeline.js';
import { newestFirst, Store } from './store.js';
import { WebhookDispatcher, type WebhookDeliveryOptions } from './webhooks-delivery.js';
import { WebhookEndpointRegistry } from './webhooks-endpoints.js';

export interface AccountDump {
  id: string;
  keyHint: string;
  paymentIntents: Stripe.PaymentIntent[];
  charges: Stripe.Charge[];
  refunds: Stripe.Refund[];
  disputes: Stripe.Dispute[];
  earlyFraudWarnings: Stripe.Radar.EarlyFraudWarning[];
  eventCount: number;
  idempotencyKeys: KeySummary[];
}

export interface StateDump {
  clock: { nowMs: number; offsetMs: number };
  retentionMs: number;
  counters: CounterSnapshot;
  faults: FaultRule[];
  accounts: AccountDump[];
}

export interface EventFilter {
  type?: string | undefined;
  /** An account ID (`acct_...`); omitted, events of every account. */
  account?: string | undefined;
}

export interface EmulatorCoreOptions {
  retentionMs?: number;
  /**
   * How long a manual-capture authorization stays capturable (`capture_before` is this far out
   * from the authorization, on the emulator's clock). Default 7 days, as Stripe gives online card
   * payments; tests may shorten it.
   */
  authorizationWindowMs?: number;
  /** Wait before asynchronous payments and refunds settle. */
  asyncSettleMs?: number;
  webhookDelivery?: Partial<WebhookDeliveryOptions>;
}

/** All in-memory state of one emulator, shared by the Stripe API, the control API and tests. */
export class EmulatorCore implements PipelineDeps {
  readonly clock = new Clock();
  // Every recorded event goes to webhook delivery.
  readonly store = new Store((account, event) => {
    this.webhooks.enqueue(account, event);
  });
  readonly faults = new FaultInjector();
  readonly counters = new Counters();
  readonly idempotency: IdempotencyStore;
  readonly webhookEndpoints = new WebhookEndpointRegistry(this.clock);
  readonly webhooks: WebhookDispatcher;
  readonly settlements: AsyncSettlement;
  authorizationWindowMs: number;
  readonly #startingAuthorizationWindowMs: number;

  constructor(options: EmulatorCoreOptions = {}) {
    this.#startingAuthorizationWindowMs = options.authorizationWindowMs ?? DEFAULT_AUTHORIZATION_WINDOW_MS;
    this.authorizationWindowMs = this.#startingAuthorizationWindowMs;
    this.idempotency = new IdempotencyStore(this.clock, options.retentionMs ?? DEFAULT_RETENTION_MS);
    this.webhooks = new WebhookDispatcher(
      { endpoints: this.webhookEndpoints, faults: this.faults, counters: this.counters, clock: this.clock },
      options.webhookDelivery,
    );
    this.settlements = new AsyncSettlement(this.clock, options.asyncSettleMs, () => this.authorizationWindowMs);
  }

  /**
   * Moves the clock forward and lets every hold whose `capture_before` it passed lapse at once, and
   * every dispute whose `due_by` it passed close (with their events), in every account. Returns the
   * new time in ms since the epoch.
   */
  advanceClock(ms: number): number {
    const now = this.clock.advance(ms);
    for (const account of this.store.accounts()) {
      this.counters.holdsLapsed(lapseExpiredHolds(account, this.clock.nowSeconds()));
      closePastDueDisputes(account, this.clock.nowSeconds());
    }
    return now;
  }

  /**
   * The issuer decides an open dispute now, in whichever account holds it: `missing` if no account
   * does, `closed` if it was decided already.
   */
  decideDispute(disputeId: string, outcome: DisputeOutcome): Stripe.Dispute | 'missing' | 'closed' {
    const account = this.store.accounts().find((candidate) => candidate.disputes.has(disputeId));
    const dispute = account?.disputes.get(disputeId);
    if (!account || !dispute) return 'missing';
    if (!decideOpenDispute(account, dispute, outcome, this.clock.nowSeconds())) return 'closed';
    return structuredClone(dispute);
  }

  configureAuthorizationWindow(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 1_000) throw new RangeError(`authorization window must be a whole number of ms >= 1000, got ${ms}`);
    this.authorizationWindowMs = ms;
  }

  dump(): StateDump {
    const keys = this.idempotency.summaries();
    return {
      clock: { nowMs: this.clock.nowMs(), offsetMs: this.clock.offsetMs },
      retentionMs: this.idempotency.retentionMs,
      counters: this.counters.snapshot(),
      faults: this.faults.list(),
      accounts: this.store.accounts().map((account) => ({
        id: account.id,
        keyHint: account.keyHint,
        paymentIntents: structuredClone(newestFirst(account.paymentIntents)),
        charges: structuredClone(newestFirst(account.charges)),
        refunds: structuredClone(newestFirst(account.refunds)),
        disputes: structuredClone(newestFirst(account.disputes)),
        earlyFraudWarnings: structuredClone(newestFirst(account.earlyFraudWarnings)),
        eventCount: account.events.newestFirst().length,
        idempotencyKeys: keys.filter((key) => key.account === account.id),
      })),
    };
  }

  /** Stops timers and in-flight deliveries, so the process can exit. */
  stop(): void {
    this.settlements.reset();
    this.webhooks.reset();
  }

  /** Settles a processing PaymentIntent now, in whichever account holds it. */
  settlePaymentIntent(paymentIntentId: string, outcome?: 'succeeded' | 'failed'): boolean {
    const account = this.store.accounts().find((candidate) => candidate.paymentIntents.has(paymentIntentId));
    return account ? this.settlements.settlePaymentIntentNow(account, paymentIntentId, outcome) : false;
  }

  /** Newest first across the selected accounts. */
  events(filter: EventFilter = {}): EmulatedEvent[] {
    return this.store
      .accounts()
      .filter((account) => filter.account === undefined || account.id === filter.account)
      .flatMap((account) => account.events.newestFirst())
      .filter((event) => filter.type === undefined || event.type === filter.type)
      .sort((a, b) => b.created - a.created);
  }

  /**
   * Forgets objects, keys, events, counters, fault rules, webhook endpoints and pending
   * deliveries and settlements, the clock offset and a changed authorization window: a fresh
   * emulator.
   */
  reset(): void {
    this.settlements.reset();
    this.webhooks.reset();
    this.webhookEndpoints.clear();
    this.store.reset();
    this.idempotency.reset();
    this.faults.clear();
    this.counters.reset();
    this.clock.reset();
    this.authorizationWindowMs = this.#startingAuthorizationWindowMs;
  }
}
