// The services' shared settings from the environment (Temporal, PostgreSQL, Stripe, the API,
// webhooks, metrics listeners), validated so one run reports every bad setting at once.
import { z } from 'zod';
import { ConfigError } from './config-error.js';

/** Reads `process.env`-shaped input; blank values count as unset. */
type Env = Record<string, string | undefined>;

const blankIsUnset = (env: Env): Env =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));

const taskQueueSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,200}$/, "must be letters, digits, '.', '-' or '_' (e.g. order-payments)")
  .default('order-payments');

const temporalSchema = z.object({
  /** Task queue the worker polls and the starter starts on. Default `order-payments`. */
  TEMPORAL_TASK_QUEUE: taskQueueSchema,
  /** Where run links point. Default the dev server's UI, `http://localhost:8233`. */
  TEMPORAL_UI_URL: z.url('must be a URL such as http://localhost:8233').default('http://localhost:8233'),
});

const databaseSchema = z.object({
  DATABASE_URL: z
    .string({ error: 'is required: a PostgreSQL URL such as postgres://postgres@127.0.0.1:5432/payments' })
    .regex(/^postgres(ql)?:\/\//, 'must be a PostgreSQL URL such as postgres://postgres@127.0.0.1:5432/payments'),
  /** Connections in the worker's pool. Default 10. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
});

const stripeSchema = z
  .object({
    STRIPE_SECRET_KEY: z
      .string({ error: 'is required: a test-mode secret key (sk_test_...), or any sk_test_ value for the emulator' })
      .regex(
        /^(sk|rk)_test_\w+$/,
        'must be a test-mode key (sk_test_... or rk_test_...): this reference project never runs against live mode',
      ),
    /** A Stripe-compatible server (the emulator). Unset: Stripe's own API, in test mode. */
    STRIPE_API_BASE: z.url('must be a URL such as http://127.0.0.1:12111').optional(),
  });

const apiSchema = z.object({
  /** Port of the HTTP service (`npm run api`). Default 3000; 0 picks a free one. */
  API_PORT: z.coerce
    .number({ error: 'must be a port number such as 3000' })
    .int('must be a whole port number such as 3000')
    .min(0, 'must be between 0 and 65535')
    .max(65_535, 'must be between 0 and 65535')
    .default(3000),
  /** Interface to listen on. Default 127.0.0.1; 0.0.0.0 to accept connections from elsewhere. */
  API_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * How long POST /v1/orders waits for the payment's outcome before answering 202 pending.
   * Default 10 s: a hold is usually known in well under a second; past this the checkout is
   * better told to poll than held.
   */
  API_OUTCOME_WAIT_MS: z.coerce.number({ error: 'must be milliseconds, such as 10000' }).int().min(0).max(120_000, 'must be at most 120000 (2 minutes)').default(10_000),
  /**
   * How long a client may take to send one whole request, headers and body; past it the request
   * gets 408 and its socket is closed, so slow clients cannot pin sockets. Default 10000.
   */
  API_REQUEST_TIMEOUT_MS: z.coerce.number({ error: 'must be milliseconds, such as 10000' }).int().min(1_000, 'must be at least 1000').max(120_000, 'must be at most 120000').default(10_000),
  /**
   * The proxies whose X-Forwarded-For names the client (comma-separated addresses or CIDRs, e.g.
   * 10.0.0.0/8), for the per-IP rate limit. Unset: the socket's address is the client's, and the
   * header is ignored (anyone can send it).
   */
  API_TRUST_PROXY: z
    .string()
    .regex(/^[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*$/, 'must be comma-separated proxy addresses or CIDRs, such as 10.0.0.0/8,127.0.0.1')
    .optional(),
});

const stripeWebhookSchema = z.object({
  /**
   * The endpoint's signing secret, or several separated by commas while one is rotated
   * (`whsec_new,whsec_old`): a delivery signed with any of them is accepted. Stripe signs with
   * both secrets for up to 24 hours after a roll; keeping the old one here for longer covers a
   * rotation done outside that window, and removing it ends the old secret's life.
   */
  STRIPE_WEBHOOK_SECRET: z
    .string({
      error:
        "is required: the endpoint's signing secret (whsec_...), from the Stripe Dashboard, `stripe listen`, or the emulator's --webhook-secret",
    })
    .regex(
      /^whsec_[^\s,]+(,whsec_[^\s,]+)*$/,
      "must be a webhook signing secret starting with whsec_ (the endpoint's secret, not the API key), or several separated by commas while rotating one",
    ),
  /**
   * How old a signature's timestamp may be, in seconds, before the delivery is refused as a
   * possible replay. Default 300, the Stripe SDK's own default.
   */
  STRIPE_WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().min(1, 'must be at least 1 second').max(3600).default(300),
});

const settlementSchema = z.object({
  /**
   * How long the saga waits for an asynchronous payment's webhook before it asks Stripe itself.
   * Default 900000 (15 minutes); a demo without webhooks may want a few seconds.
   */
  SETTLEMENT_RECHECK_MS: z.coerce
    .number({ error: 'must be a number of milliseconds such as 900000' })
    .int('must be a whole number of milliseconds')
    .min(100, 'must be at least 100 ms')
    .optional(),
  /**
   * How long before a hold's `capture_before` the saga stops trying to capture it and voids it
   * instead. Default 3600000 (1 hour) against Stripe's 7-day authorization window.
   */
  CAPTURE_MARGIN_MS: z.coerce
    .number({ error: 'must be a number of milliseconds such as 3600000' })
    .int('must be a whole number of milliseconds')
    .min(0, 'must be 0 or more')
    .max(6 * 24 * 60 * 60 * 1000, 'must leave at least a day of the 7-day authorization window (at most 518400000)')
    .optional(),
});

const workerMetricsSchema = z.object({
  /** Port of the worker's Prometheus endpoint on 127.0.0.1 (/metrics). Default 9464; 0 turns it off. */
  WORKER_METRICS_PORT: z.coerce
    .number({ error: 'must be a port number such as 9464 (0 turns the metrics endpoint off)' })
    .int('must be a whole port number such as 9464')
    .min(0, 'must be between 0 and 65535')
    .max(65_535, 'must be between 0 and 65535')
    .default(9464),
});

export interface TemporalSettings {
  taskQueue: string;
  uiUrl: string;
}
export interface DatabaseSettings {
  url: string;
  poolSize: number;
}
export interface StripeSettings {
  secretKey: string;
  apiBase: string | undefined;
}
export interface ApiSettings {
  port: number;
  host: string;
  outcomeWaitMs: number;
  requestTimeoutMs: number;
  /** Trusted proxies for X-Forwarded-For; null = trust none. */
  trustProxy: string | null;
}
export interface StripeWebhookSettings {
  /** Every secret a delivery may be signed with: the current one first, then any being retired. */
  secrets: string[];
  toleranceSeconds: number;
}

const disputeSchema = z.object({
  /**
   * What a dispute's workflow does when the evidence deadline comes with nothing submitted:
   * `accept` (the default) closes it at Stripe, lost but recorded as accepted at the deadline;
   * `lose` leaves it for Stripe to close lost by default (recorded as expired).
   */
  DISPUTE_DEADLINE_POLICY: z.enum(['accept', 'lose'], { error: 'must be accept or lose' }).default('accept'),
  /** How long before the evidence deadline `order.dispute_evidence_due` is announced. Default 48 hours. */
  DISPUTE_REMINDER_LEAD_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).int().min(0).default(48 * 3600),
  /** How long before Stripe's due_by the deadline policy acts (Stripe takes nothing after it). Default 2 hours. */
  DISPUTE_POLICY_LEAD_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).int().min(0).default(2 * 3600),
  /** How often an open dispute is read again from Stripe with no webhook (a lost one). Default 6 hours. */
  DISPUTE_RESYNC_SECONDS: z.coerce.number({ error: 'must be a number of seconds' }).int().min(1).default(6 * 3600),
});

export interface DisputeSettings {
  deadlinePolicy: 'accept' | 'lose';
  reminderLeadMs: number;
  policyLeadMs: number;
  resyncMs: number;
}

const fraudWarningSchema = z.object({
  /**
   * What an early fraud warning on a captured, undisputed charge does: `refund` (the default)
   * refunds what is still refundable, which usually costs less than the dispute that would
   * follow; `ignore` records it and refunds nothing.
   */
  EARLY_FRAUD_WARNING_POLICY: z.enum(['refund', 'ignore'], { error: 'must be refund or ignore' }).default('refund'),
});

export function loadFraudWarningPolicy(env: Env = process.env): 'refund' | 'ignore' {
  return parse(fraudWarningSchema, env).EARLY_FRAUD_WARNING_POLICY;
}

export function loadDisputeSettings(env: Env = process.env): DisputeSettings {
  const parsed = parse(disputeSchema, env);
  return {
    deadlinePolicy: parsed.DISPUTE_DEADLINE_POLICY,
    reminderLeadMs: parsed.DISPUTE_REMINDER_LEAD_SECONDS * 1000,
    policyLeadMs: parsed.DISPUTE_POLICY_LEAD_SECONDS * 1000,
    resyncMs: parsed.DISPUTE_RESYNC_SECONDS * 1000,
  };
}

function parse<Schema extends z.ZodType>(schema: Schema, env: Env): z.output<Schema> {
  const parsed = schema.safeParse(blankIsUnset(env));
  if (!parsed.success) throw ConfigError.fromZod(parsed.error);
  return parsed.data;
}

export function loadTemporalSettings(env: Env = process.env): TemporalSettings {
  const parsed = parse(temporalSchema, env);
  return { taskQueue: parsed.TEMPORAL_TASK_QUEUE, uiUrl: parsed.TEMPORAL_UI_URL.replace(/\/$/, '') };
}

export function loadDatabaseSettings(env: Env = process.env): DatabaseSettings {
  const parsed = parse(databaseSchema, env);
  return { url: parsed.DATABASE_URL, poolSize: parsed.DATABASE_POOL_SIZE };
}

export function loadStripeSettings(env: Env = process.env): StripeSettings {
  const parsed = parse(stripeSchema, env);
  return { secretKey: parsed.STRIPE_SECRET_KEY, apiBase: parsed.STRIPE_API_BASE };
}

/** Worker-side settings of the payment's timing; unset values keep the activities' defaults. */
export function loadSettlementSettings(env: Env = process.env): { settlementRecheckMs?: number; captureMarginMs?: number } {
  const parsed = parse(settlementSchema, env);
  return {
    ...(parsed.SETTLEMENT_RECHECK_MS !== undefined && { settlementRecheckMs: parsed.SETTLEMENT_RECHECK_MS }),
    ...(parsed.CAPTURE_MARGIN_MS !== undefined && { captureMarginMs: parsed.CAPTURE_MARGIN_MS }),
  };
}

/** The worker's metrics endpoint: a port on 127.0.0.1, or null when WORKER_METRICS_PORT=0. */
export function loadWorkerMetricsSettings(env: Env = process.env): { port: number | null } {
  const parsed = parse(workerMetricsSchema, env);
  return { port: parsed.WORKER_METRICS_PORT === 0 ? null : parsed.WORKER_METRICS_PORT };
}

/**
 * A service's own metrics listener (issue 15): `variable` names its port (the API's
 * API_METRICS_PORT, the outbox dispatcher's and the receipts consumer's METRICS_PORT), 0 turns
 * it off; METRICS_HOST is the interface, default 127.0.0.1 (0.0.0.0 for a Prometheus elsewhere).
 */
export function loadMetricsListenerSettings(variable: string, defaultPort: number, env: Env = process.env): { port: number | null; host: string } {
  const schema = z.object({
    [variable]: z.coerce
      .number({ error: `must be a port number such as ${defaultPort} (0 turns the metrics endpoint off)` })
      .int('must be a whole port number')
      .min(0, 'must be between 0 and 65535')
      .max(65_535, 'must be between 0 and 65535')
      .default(defaultPort),
    METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  });
  const parsed = parse(schema, { [variable]: env[variable], METRICS_HOST: env.METRICS_HOST });
  const port = parsed[variable] as number;
  return { port: port === 0 ? null : port, host: parsed.METRICS_HOST as string };
}

export function loadApiSettings(env: Env = process.env): ApiSettings {
  const parsed = parse(apiSchema, env);
  return {
    port: parsed.API_PORT,
    host: parsed.API_HOST,
    outcomeWaitMs: parsed.API_OUTCOME_WAIT_MS,
    requestTimeoutMs: parsed.API_REQUEST_TIMEOUT_MS,
    trustProxy: parsed.API_TRUST_PROXY ?? null,
  };
}

export function loadStripeWebhookSettings(env: Env = process.env): StripeWebhookSettings {
  const parsed = parse(stripeWebhookSchema, env);
  return { secrets: parsed.STRIPE_WEBHOOK_SECRET.split(','), toleranceSeconds: parsed.STRIPE_WEBHOOK_TOLERANCE_SECONDS };
}

/** Loads several groups at once so one run reports every bad setting, not just the first. */
export function loadAll<T extends Record<string, () => unknown>>(loaders: T): { [K in keyof T]: ReturnType<T[K]> } {
  const problems: string[] = [];
  const loaded: Partial<Record<keyof T, unknown>> = {};
  for (const [name, load] of Object.entries(loaders) as [keyof T, () => unknown][]) {
    try {
      loaded[name] = load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return loaded as { [K in keyof T]: ReturnType<T[K]> };
}
