// Fault injection: the rule kinds (dropped responses, failures before or during execution,
// latency, duplicated, reordered or delayed webhooks), what each matches, and when it fires
// (a count, or a seeded probability so a run can be replayed).
import { z } from 'zod';
import type { FaultKind } from './counters.js';
import { seededRandom } from './seeded-random.js';

const matchFields = {
  /** HTTP method; omitted or `*` matches any. */
  method: z
    .string()
    .regex(/^(\*|[A-Za-z]+)$/)
    .transform((method) => method.toUpperCase())
    .optional(),
  /** Path pattern: `*` or `:name` matches one segment, a trailing `**` matches the rest. */
  path: z.string().startsWith('/'),
  /** Matches only requests whose parameters carry `metadata[order_id]` equal to this. */
  orderId: z.string().min(1).optional(),
  /** How many times the rule fires before it is spent. Default 1, or unlimited with `probability`. */
  count: z.number().int().positive().optional(),
  /** Chance that a matching request triggers the rule, drawn from the rule's seeded PRNG. */
  probability: z.number().min(0).max(1).optional(),
  seed: z.number().int().optional(),
};

/** Webhook faults match on the event instead of the request. */
const webhookMatchFields = {
  /** Event type: exact (`payment_intent.succeeded`), a prefix (`payment_intent.*`) or `*`. Default `*`. */
  eventType: z
    .string()
    .regex(/^(\*|[a-z_]+(\.[a-z_]+)*(\.\*)?)$/, 'must be an event type such as payment_intent.succeeded, a prefix such as refund.*, or *')
    .optional(),
  orderId: matchFields.orderId,
  count: matchFields.count,
  probability: matchFields.probability,
  seed: matchFields.seed,
};

export const faultRuleSpecSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('drop_response'), ...matchFields }),
  z.strictObject({
    kind: z.literal('fail_before_execution'),
    status: z.union([z.literal(500), z.literal(429)]).default(500),
    ...matchFields,
  }),
  z.strictObject({ kind: z.literal('fail_during_execution'), status: z.literal(500).default(500), ...matchFields }),
  z.strictObject({ kind: z.literal('latency'), latencyMs: z.number().int().min(0).max(120_000), ...matchFields }),
  /** Delivers the event, then delivers it again: same event ID, fresh signature. */
  z.strictObject({ kind: z.literal('webhook_duplicate'), copies: z.number().int().min(1).max(10).default(1), ...webhookMatchFields }),
  /** Holds the event back until the next event for the endpoint was delivered (or `holdMs` passed). */
  z.strictObject({ kind: z.literal('webhook_reorder'), holdMs: z.number().int().min(0).max(600_000).default(10_000), ...webhookMatchFields }),
  /** Waits `delayMs` before the first delivery attempt. */
  z.strictObject({ kind: z.literal('webhook_delay'), delayMs: z.number().int().min(0).max(3_600_000), ...webhookMatchFields }),
]);

/** A rule as callers write it (defaults may be omitted). */
export type FaultRuleInput = z.input<typeof faultRuleSpecSchema>;
export type FaultRuleSpec = z.output<typeof faultRuleSpecSchema>;

/** A rule as it is listed: its spec plus how often it fired and how many uses it has left. */
export type FaultRule = FaultRuleSpec & { id: string; fired: number; remaining: number | null };

export interface FaultTarget {
  method: string;
  path: string;
  orderId: string | undefined;
}

/** What a webhook fault matches: the event about to be delivered. */
export interface WebhookFaultTarget {
  eventType: string;
  orderId: string | undefined;
}

export const WEBHOOK_FAULT_KINDS = ['webhook_duplicate', 'webhook_reorder', 'webhook_delay'] as const;
export type WebhookFaultKind = (typeof WEBHOOK_FAULT_KINDS)[number];
type RequestFaultKind = Exclude<FaultKind, WebhookFaultKind>;

interface ActiveRule {
  rule: FaultRule;
  random: () => number;
}

/**
 * Scripted failures. Each rule matches on method, path and optionally the order ID, and fires
 * a limited number of times or with a seeded probability, so a chaos run can be replayed.
 */
export class FaultInjector {
  readonly #rules: ActiveRule[] = [];
  #nextId = 1;

  add(input: FaultRuleInput): FaultRule {
    const spec = faultRuleSpecSchema.parse(input);
    const remaining = spec.count ?? (spec.probability === undefined ? 1 : null);
    const rule: FaultRule = { ...spec, id: `fault_${this.#nextId++}`, fired: 0, remaining };
    this.#rules.push({ rule, random: seededRandom(spec.seed ?? 1) });
    return structuredClone(rule);
  }

  list(): FaultRule[] {
    return this.#rules.map(({ rule }) => structuredClone(rule));
  }

  remove(id: string): boolean {
    const index = this.#rules.findIndex(({ rule }) => rule.id === id);
    if (index === -1) return false;
    this.#rules.splice(index, 1);
    return true;
  }

  clear(): void {
    this.#rules.length = 0;
  }

  /** The first rule of `kind` that matches the request and decides to fire; firing uses up one count. */
  fire<K extends RequestFaultKind>(kind: K, target: FaultTarget): Extract<FaultRule, { kind: K }> | undefined {
    return this.#fire(kind, (rule) => matches(rule as Extract<FaultRule, { kind: RequestFaultKind }>, target));
  }

  /** The same, for a webhook fault and the event about to be delivered. */
  fireWebhook<K extends WebhookFaultKind>(kind: K, target: WebhookFaultTarget): Extract<FaultRule, { kind: K }> | undefined {
    return this.#fire(kind, (rule) => matchesEvent(rule as Extract<FaultRule, { kind: WebhookFaultKind }>, target));
  }

  #fire<K extends FaultKind>(kind: K, matching: (rule: FaultRule) => boolean): Extract<FaultRule, { kind: K }> | undefined {
    for (const active of this.#rules) {
      const { rule } = active;
      if (!isKind(rule, kind) || rule.remaining === 0 || !matching(rule)) continue;
      // Only draw when a probability is set, so count-only rules leave the sequence untouched.
      if (rule.probability !== undefined && active.random() >= rule.probability) continue;
      rule.fired += 1;
      if (rule.remaining !== null) rule.remaining -= 1;
      return structuredClone(rule);
    }
    return undefined;
  }
}

function isKind<K extends FaultKind>(rule: FaultRule, kind: K): rule is Extract<FaultRule, { kind: K }> {
  return rule.kind === kind;
}

function matchesEvent(rule: Extract<FaultRule, { kind: WebhookFaultKind }>, target: WebhookFaultTarget): boolean {
  if (rule.orderId !== undefined && rule.orderId !== target.orderId) return false;
  const pattern = rule.eventType ?? '*';
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return target.eventType.startsWith(pattern.slice(0, -1));
  return pattern === target.eventType;
}

function matches(rule: Extract<FaultRule, { kind: RequestFaultKind }>, target: FaultTarget): boolean {
  if (rule.method !== undefined && rule.method !== '*' && rule.method !== target.method) return false;
  if (rule.orderId !== undefined && rule.orderId !== target.orderId) return false;
  return pathMatches(rule.path, target.path);
}

export function pathMatches(pattern: string, path: string): boolean {
  const wanted = pattern.split('/').filter((segment) => segment !== '');
  const actual = path.split('/').filter((segment) => segment !== '');
  for (const [index, segment] of wanted.entries()) {
    if (segment === '**' && index === wanted.length - 1) return true;
    const value = actual[index];
    if (value === undefined) return false;
    if (segment !== '*' && !segment.startsWith(':') && segment !== value) return false;
  }
  return wanted.length === actual.length;
}
