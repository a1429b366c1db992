// The starter command (`npm run start`): starts or attaches to one order's saga from the command
// line and prints the payment outcome as soon as it is known; safe to run again.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from './platform/config/config-error.js';
import { loadTemporalSettings } from './platform/config/settings.js';
import { DEFAULT_TENANT_ID, parseOrderInput, workflowIdForOrder, type OrderInput } from './domain/order-input.js';
import type { PaymentOutcome } from './domain/order-result.js';
import { requestHash } from './money/idempotency/request-hash.js';
import { startOrderForPaymentOutcome } from './saga-client/payment-outcome.js';
import { describeIfExists, OrderIdConflictError, resultOf, type StartOutcome } from './saga-client/start-order.js';
import { loadTemporalConnectConfig } from './platform/temporal/connection-config.js';
import { dataConverterFor } from './platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings, type PayloadEncryptionSettings } from './platform/temporal/payload-encryption/settings.js';
import { startTracing, TraceAttribute, type Tracing } from './platform/telemetry/tracing.js';

/** Exit codes a script can branch on. */
const Exit = { ok: 0, failed: 1, badInput: 2, orderIdConflict: 3 } as const;

const wholeNumber = (flag: string) => (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${flag} must be a whole number, got '${value}'`);
  return Number(value);
};

const program = new Command('start')
  .description(
    'Start (or attach to) the payment saga of one order and print the payment outcome as soon as it is known. ' +
      'Safe to run again: an order is never charged twice.',
  )
  .requiredOption('--order-id <id>', 'your order ID; the workflow ID is order-payment-<id>')
  .requiredOption('--customer-id <id>', 'your customer ID (recorded in Stripe metadata)')
  .requiredOption('--amount <minor-units>', 'amount in minor units, 1 to 99999999 (1999 = 19.99)', wholeNumber('--amount'))
  .requiredOption('--currency <iso>', 'three-letter ISO currency Stripe supports (usd, eur, pln, ...)')
  .requiredOption('--payment-method <pm>', 'Stripe PaymentMethod ID (pm_card_visa in test mode)')
  .requiredOption('--sku <sku>', 'stock-keeping unit to allocate')
  .requiredOption('--quantity <n>', 'units to allocate, 1 to 1000', wholeNumber('--quantity'))
  // The starter talks to Temporal directly, an operator's access: it may start an order for any
  // tenant, and the order reserves only that tenant's stock. API callers get their key's tenant.
  .option('--tenant <id>', "the tenant whose stock the order reserves", DEFAULT_TENANT_ID)
  .option('--wait', 'wait for the order to finish and print its result', false)
  .option('--outcome-wait-ms <ms>', 'how long to wait for the payment outcome before going on without it', wholeNumber('--outcome-wait-ms'), 30_000)
  .option('--json', 'print one JSON object instead of text', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? Exit.ok : Exit.badInput))
  .configureOutput({ writeErr: (text) => process.stderr.write(`start: ${text}`) });

interface Flags {
  orderId: string;
  tenant: string;
  customerId: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  sku: string;
  quantity: number;
  wait: boolean;
  outcomeWaitMs: number;
  json: boolean;
}

async function main(): Promise<number> {
  const flags = program.parse().opts<Flags>();
  // Validated before Temporal is contacted: bad input starts nothing.
  const parsed = parseOrderInput({
    orderId: flags.orderId,
    tenantId: flags.tenant,
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
  const encryption = loadPayloadEncryptionSettings();
  const order = parsed.value;
  // Traces (OTLP/HTTP with OTEL_EXPORTER_OTLP_ENDPOINT, or the local store with TRACE_FILE): the
  // order's trace starts here, in a span carrying only its ID, and its workflow start or update
  // carries the context on (the SDK's client interceptor). Null: off.
  const tracing = startTracing('order-payments-starter', process.env, { postgres: false });
  try {
    return await trace
      .getTracer('order-payments-starter')
      .startActiveSpan('start order', { attributes: { [TraceAttribute.orderId]: order.orderId } }, async (span) => {
        try {
          const code = await startAndReport(order, flags, settings, connect, encryption, tracing);
          if (code !== Exit.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${code}` });
          return code;
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'failed' });
          throw error;
        } finally {
          span.end();
        }
      });
  } finally {
    // Flushes the spans still buffered before the process exits.
    await tracing?.shutdown();
  }
}

async function startAndReport(
  order: OrderInput,
  flags: Flags,
  settings: ReturnType<typeof loadTemporalSettings>,
  connect: ReturnType<typeof loadTemporalConnectConfig>,
  encryption: PayloadEncryptionSettings,
  tracing: Tracing | null,
): Promise<number> {
  const connection = await Connection.connect(connect.connectionOptions);
  try {
    const client = new Client({
      connection,
      namespace: connect.namespace,
      dataConverter: dataConverterFor(encryption),
      ...(tracing && { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } }),
    });
    // Only chooses the verb below; the workflow-ID policies are what hold under a race.
    const before = await describeIfExists(client, workflowIdForOrder(order.orderId));
    const started = await startOrderForPaymentOutcome(client, settings.taskQueue, order, {
      // One update per order and payload: running it again attaches to the same one, and a
      // different order under the same ID gets its own, which the saga's validator refuses.
      updateId: `cli/${order.orderId}/${requestHash(order)}`,
      waitMs: flags.outcomeWaitMs,
    });
    const { runId } = await started.handle.describe();
    const outcome: StartOutcome = before === null ? 'started' : before.status.name === 'RUNNING' ? 'attached' : 'already-finished';
    const uiUrl = `${settings.uiUrl}/namespaces/${encodeURIComponent(connect.namespace)}/workflows/${encodeURIComponent(started.workflowId)}/${runId}/history`;
    const report: Record<string, unknown> = { outcome, workflowId: started.workflowId, runId, uiUrl, payment: started.payment };
    if (!flags.json) {
      const verb = { started: 'started', attached: 'attached to the running', 'already-finished': 'already finished:' }[outcome];
      console.log(`order ${order.orderId}: ${verb} workflow ${started.workflowId}\n  run ID  ${runId}\n  Web UI  ${uiUrl}`);
      console.log(`  payment ${describePayment(started.payment, flags.outcomeWaitMs)}`);
    }
    // A finished order always reports its result: that is the answer to "was it charged?".
    if (flags.wait || outcome === 'already-finished') {
      const ended = await resultOf(started.handle);
      if (ended.ok) report.result = ended.result;
      else report.failure = ended.failure;
      if (!flags.json) {
        console.log(ended.ok ? `  result  ${JSON.stringify(ended.result)}` : `  failed  ${ended.failure}`);
      }
      if (flags.json) console.log(JSON.stringify(report));
      return ended.ok ? Exit.ok : Exit.failed;
    }
    if (flags.json) console.log(JSON.stringify(report));
    return Exit.ok;
  } finally {
    await connection.close();
  }
}

function describePayment(payment: PaymentOutcome | null, waitMs: number): string {
  if (payment === null) return `not known after ${waitMs} ms; the saga goes on (run again, or add --wait)`;
  switch (payment.status) {
    case 'authorized':
      return `authorized (hold ${payment.paymentIntentId}); the saga captures and confirms next`;
    case 'requires_action':
      return `requires_action: the customer must complete ${typeof payment.nextAction?.type === 'string' ? payment.nextAction.type : 'an action'} for ${payment.paymentIntentId}`;
    case 'declined':
      return `declined (${payment.declineCode}); nothing was charged`;
    case 'out_of_stock':
      return 'out_of_stock; nothing was charged';
    case 'failed':
      return `failed before an authorization was known: ${payment.reason}`;
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
