import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { DEFAULT_RETENTION_MS, startStripeEmulator, type FaultRuleInput } from './index.js';

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

interface CliOptions {
  port: number;
  host: string;
  retentionMs: number;
  quiet: boolean;
  fault: FaultRuleInput[];
}

const program = new Command()
  .name('stripe-emulator')
  .description('A Stripe API emulator with Stripe-exact idempotency and scriptable faults.')
  .option('-p, --port <port>', 'port to listen on (0 picks a free one)', integer('port', 0), 12111)
  .option('--host <host>', 'interface to listen on', '127.0.0.1')
  .option('--retention-ms <ms>', 'how long idempotency keys are remembered', integer('retention-ms', 1), DEFAULT_RETENTION_MS)
  .option('-q, --quiet', 'do not log requests', false)
  .option('--fault <json>', 'install a fault rule at start (repeatable)', collectFault, [])
  .parse();

const options = program.opts<CliOptions>();
const logger = pino({ base: null });
const emulator = await startStripeEmulator({
  port: options.port,
  host: options.host,
  retentionMs: options.retentionMs,
  logger: options.quiet ? false : logger,
});
for (const rule of options.fault) emulator.addFault(rule);
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
