import { Client, Connection } from '@temporalio/client';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from './config/config-error.js';
import { loadTemporalSettings } from './config/settings.js';
import { parseOrderInput } from './domain/order-input.js';
import { OrderIdConflictError, resultOf, startOrder } from './starter/start-order.js';
import { loadTemporalConnectConfig } from './temporal/connection-config.js';

/** Exit codes a script can branch on. */
const Exit = { ok: 0, failed: 1, badInput: 2, orderIdConflict: 3 } as const;

const wholeNumber = (flag: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${flag} must be a whole number, got '${value}'`);
  return Number(value);
};

const program = new Command('start')
  .description('Start (or attach to) the payment saga of one order. Safe to run again: an order is never charged twice.')
  .requiredOption('--order-id <id>', 'your order ID; the workflow ID is order-payment-<id>')
  .requiredOption('--customer-id <id>', 'your customer ID (recorded in Stripe metadata)')
  .requiredOption('--amount <minor-units>', 'amount in minor units, 1 to 99999999 (1999 = 19.99)', wholeNumber('--amount'))
  .requiredOption('--currency <iso>', 'three-letter ISO currency Stripe supports (usd, eur, pln, ...)')
  .requiredOption('--payment-method <pm>', 'Stripe PaymentMethod ID (pm_card_visa in test mode)')
  .requiredOption('--sku <sku>', 'stock-keeping unit to allocate')
  .requiredOption('--quantity <n>', 'units to allocate, 1 to 1000', wholeNumber('--quantity'))
  .option('--wait', 'wait for the order to finish and print its result', false)
  .option('--json', 'print one JSON object instead of text', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.ok : Exit.badInput))
  .configureOutput({ writeErr: (text) => process.stderr.write(`start: ${text}`) });

interface Flags {
  orderId: string;
  customerId: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  sku: string;
  quantity: number;
  wait: boolean;
  json: boolean;
}

async function main(): Promise<number> {
  const flags = program.parse().opts<Flags>();
  // Validated before Temporal is contacted: bad input starts nothing.
  const parsed = parseOrderInput({
    orderId: flags.orderId,
    customerId: flags.customerId,
    amount: flags.amount,
    currency: flags.currency,
    paymentMethod: flags.paymentMethod,
    sku: flags.sku,
    quantity: flags.quantity,
  });
  if (!parsed.ok) {
    console.error(`start: invalid order:\n${parsed.problems.map((problem) => `  - ${problem}`).join('\n')}`);
    return Exit.badInput;
  }
  const settings = loadTemporalSettings();
  const connect = loadTemporalConnectConfig();

  const connection = await Connection.connect(connect.connectionOptions);
  try {
    const client = new Client({ connection, namespace: connect.namespace });
    const started = await startOrder(client, settings.taskQueue, parsed.value);
    const uiUrl = `${settings.uiUrl}/namespaces/${encodeURIComponent(connect.namespace)}/workflows/${encodeURIComponent(started.workflowId)}/${started.runId}/history`;
    const report: Record<string, unknown> = {
      outcome: started.outcome,
      workflowId: started.workflowId,
      runId: started.runId,
      uiUrl,
    };
    if (!flags.json) {
      const verb = { started: 'started', attached: 'attached to the running', 'already-finished': 'already finished:' }[started.outcome];
      console.log(`order ${parsed.value.orderId}: ${verb} workflow ${started.workflowId}\n  run ID  ${started.runId}\n  Web UI  ${uiUrl}`);
    }
    // A finished order always reports its result: that is the answer to "was it charged?".
    if (flags.wait || started.outcome === 'already-finished') {
      const outcome = await resultOf(started.handle);
      if (outcome.ok) report.result = outcome.result;
      else report.failure = outcome.failure;
      if (!flags.json) {
        console.log(outcome.ok ? `  result  ${JSON.stringify(outcome.result)}` : `  failed  ${outcome.failure}`);
      }
      if (flags.json) console.log(JSON.stringify(report));
      return outcome.ok ? Exit.ok : Exit.failed;
    }
    if (flags.json) console.log(JSON.stringify(report));
    return Exit.ok;
  } finally {
    await connection.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(`start: ${error.message}`);
      process.exit(Exit.badInput);
    }
    if (error instanceof OrderIdConflictError) {
      console.error(`start: ${error.message}\n  use a new order ID for a different order`);
      process.exit(Exit.orderIdConflict);
    }
    console.error(`start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(Exit.failed);
  },
);
