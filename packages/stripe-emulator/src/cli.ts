// `npm run stripe-emulator` / `npm start`: the emulator as a long-running server, configured by flags.
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import {
  DEFAULT_ASYNC_SETTLE_MS,
  DEFAULT_AUTHORIZATION_WINDOW_MS,
  DEFAULT_RETENTION_MS,
  DEFAULT_WEBHOOK_DELIVERY,
  startStripeEmulator,
  type FaultRuleInput,
} from './index.js';

function integer(name: string, min: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isSafeInteger(parsed) || parsed < min) {
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    }
    return parsed;
  };
}

function collectFault(value: string, previous: FaultRuleInput[]): FaultRuleInput[] {
  try {
    return [...previous, JSON.parse(value) as FaultRuleInput];
  } catch {
    throw new InvalidArgumentError('--fault takes a JSON fault rule');
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

interface CliOptions {
  port: number;
  host: string;
  retentionMs: number;
  quiet: boolean;
  fault: FaultRuleInput[];
  webhook: string[];
  webhookSecret?: string;
  asyncSettleMs: number;
  authorizationWindowMs: number;
  webhookRetryMs: number;
  webhookMaxAttempts: number;
}

const program = new Command()
  .name('stripe-emulator')
  .description('A Stripe API emulator with Stripe-exact idempotency and scriptable faults.')
  .option('-p, --port <port>', 'port to listen on (0 picks a free one)', integer('port', 0), 12111)
  .option('--host <host>', 'interface to listen on', '127.0.0.1')
  .option('--retention-ms <ms>', 'how long idempotency keys are remembered', integer('retention-ms', 1), DEFAULT_RETENTION_MS)
  .option('-q, --quiet', 'do not log requests', false)
  .option('--fault <json>', 'install a fault rule at start (repeatable; webhook faults too)', collectFault, [])
  .option('--webhook <url>', 'deliver every event to this URL, signed (repeatable)', collect, [])
  .option('--webhook-secret <whsec>', "signing secret for --webhook endpoints (the receiver's STRIPE_WEBHOOK_SECRET); default: generated and logged")
  .option('--async-settle-ms <ms>', 'wait before pm_card_async_* payments and their refunds settle', integer('async-settle-ms', 0), DEFAULT_ASYNC_SETTLE_MS)
  .option('--authorization-window-ms <ms>', 'how long a manual-capture hold can be captured (capture_before)', integer('authorization-window-ms', 1000), DEFAULT_AUTHORIZATION_WINDOW_MS)
  .option('--webhook-retry-ms <ms>', 'first webhook retry delay; doubles per attempt', integer('webhook-retry-ms', 0), DEFAULT_WEBHOOK_DELIVERY.retryInitialMs)
  .option('--webhook-max-attempts <n>', 'webhook attempts before a delivery is abandoned', integer('webhook-max-attempts', 1), DEFAULT_WEBHOOK_DELIVERY.maxAttempts)
  .parse();

const options = program.opts<CliOptions>();
const logger = pino({ base: null });
const emulator = await startStripeEmulator({
  port: options.port,
  host: options.host,
  retentionMs: options.retentionMs,
  logger: options.quiet ? false : logger,
  asyncSettleMs: options.asyncSettleMs,
  authorizationWindowMs: options.authorizationWindowMs,
  webhookDelivery: { retryInitialMs: options.webhookRetryMs, maxAttempts: options.webhookMaxAttempts },
});
for (const rule of options.fault) emulator.addFault(rule);
for (const url of options.webhook) {
  const secret = emulator.addWebhookEndpoint({ url, ...(options.webhookSecret !== undefined && { secret: options.webhookSecret }) });
  // A secret the caller chose is theirs already; a generated one is printed so a receiver can use it.
  logger.info({ url, ...(options.webhookSecret === undefined && { secret }) }, `delivering webhooks to ${url}`);
}
logger.info({ url: emulator.url, retentionMs: options.retentionMs, faults: options.fault.length }, `stripe emulator listening on ${emulator.url}`);

const shutdown = (signal: NodeJS.Signals) => {
  logger.info({ signal }, 'stripe emulator stopping');
  emulator.close().then(
    () => process.exit(0),
    (error: unknown) => {
      logger.error({ err: error }, 'stripe emulator failed to close');
      process.exit(1);
    },
  );
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
