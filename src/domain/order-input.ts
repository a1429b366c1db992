// The order as every door receives it: one schema for the starter, the workflow and the API, so
// bad input is refused with the same message everywhere and starts nothing.
import { z } from 'zod';
import { belowStripeMinimum, STRIPE_CURRENCIES } from './currencies.js';

/** Stripe's ceiling for a single amount, in minor units. */
export const MAX_AMOUNT_MINOR = 99_999_999;

const identifier = (what: string, example: string) =>
  z
    .string({ error: `${what} is required` })
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
      `${what} must be 1-64 characters of letters, digits, '-' or '_', starting with a letter or digit (e.g. ${example})`,
    );

/** The tenant of an order that names none: the starter's default, and every order from before tenants. */
export const DEFAULT_TENANT_ID = 'default';

/**
 * One order as the saga receives it. Shared by the starter (flags), the workflow (its own
 * input) and the API, so every door refuses the same bad input with the same message.
 */
const buildOrderInputSchema = () =>
  z.object({
    orderId: identifier('order ID', 'A-1001'),
    /**
     * Whose order it is, and so whose stock it reserves: the API key's tenant, the starter's
     * --tenant. Absent (a run started before tenants): the default tenant, which owns the stock
     * that existed then (migration 016).
     */
    tenantId: identifier('tenant ID', 'acme-shop').default(DEFAULT_TENANT_ID),
    customerId: identifier('customer ID', 'cust-42'),
    amount: z
      .number({ error: 'amount is required, in minor units (e.g. 1999 for 19.99)' })
      .int('amount must be a whole number of minor units (e.g. 1999 for 19.99)')
      .positive('amount must be positive')
      .max(MAX_AMOUNT_MINOR, `amount must be at most ${MAX_AMOUNT_MINOR} minor units (Stripe's limit)`),
    currency: z
      .string({ error: 'currency is required' })
      .transform((value) => value.toLowerCase())
      .refine((value) => STRIPE_CURRENCIES.has(value), {
        error: 'currency must be a three-letter ISO 4217 code that Stripe supports (e.g. usd, eur, pln)',
      }),
    paymentMethod: z
      .string({ error: 'payment method is required' })
      .regex(/^pm_[A-Za-z0-9_]{1,200}$/, 'payment method must be a Stripe PaymentMethod ID (e.g. pm_card_visa)'),
    sku: z
      .string({ error: 'SKU is required' })
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "SKU must be 1-64 characters of letters, digits, '.', '-' or '_'"),
    quantity: z
      .number({ error: 'quantity is required' })
      .int('quantity must be a whole number')
      .min(1, 'quantity must be at least 1')
      .max(1000, 'quantity must be at most 1000'),
  });

/**
 * The check that needs two fields (Stripe's minimum for the currency), for every door to add
 * after it shapes its own object: zod drops an object's refinements on omit and refuses extend.
 */
export function refuseBelowStripeMinimum(order: { amount: number; currency: string }, ctx: z.RefinementCtx): void {
  const problem = belowStripeMinimum(order.amount, order.currency);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, path: ['amount'] });
}

/** The schema, for doors that extend it (the API's request body, the reconcile CLI's order IDs). */
export const orderInputSchema = buildOrderInputSchema();

// parseOrderInput's own instance, out of reach of this module's exports. The workflow bundle
// preloads this module once per worker and deep-freezes everything its exports reach, and zod
// writes to a schema's regexes (lastIndex) as it parses: a frozen schema cannot parse.
const parsingSchema = buildOrderInputSchema().superRefine(refuseBelowStripeMinimum);

export type OrderInput = z.output<typeof orderInputSchema>;

export type OrderInputParseResult = { ok: true; value: OrderInput } | { ok: false; problems: string[] };

/** Parses without throwing, so each caller reports the problems its own way. */
export function parseOrderInput(raw: unknown): OrderInputParseResult {
  const parsed = parsingSchema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message,
    ),
  };
}

export const WORKFLOW_ID_PREFIX = 'order-payment-';

/** The workflow ID is the order's identity in Temporal: one order, one workflow ID. */
export function workflowIdForOrder(orderId: string): string {
  return `${WORKFLOW_ID_PREFIX}${orderId}`;
}

/** Whether two orders are the same intent: every field equal (the currency already normalised). */
export function sameOrder(a: OrderInput, b: OrderInput): boolean {
  return (Object.keys(a) as (keyof OrderInput)[]).every((field) => a[field] === b[field]) && Object.keys(a).length === Object.keys(b).length;
}
