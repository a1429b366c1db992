// The demo's run (npm run demo): scripted orders against a running stack, followed step by step,
// then the invariants and the message flow checked for exactly those orders.
import { dataConverterFor } from '../../platform/temporal/payload-encryption/data-converter.js';
import { loadPayloadEncryptionSettings } from '../../platform/temporal/payload-encryption/settings.js';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { createPool } from '../../platform/db/pool.js';
import { workflowIdForOrder } from '../../domain/order-input.js';
import { setStock } from '../../orders/stock.js';
import { checkInvariants } from '../reconcile/invariant-checker.js';
import { startOrder } from '../../saga-client/start-order.js';
import type { StackState } from '../stack/stack-state.js';
import type { FaultRule } from '@order-payments/stripe-emulator';
import { untilActivityPending } from '../../platform/temporal/pending-activity.js';
import { createStripeClient } from '../../money/stripe/client.js';
import { EmulatorControl } from './emulator-control.js';
import { formatMessageFlowTable, messageFlowProblems, waitForMessageFlow } from './message-flow.js';
import { OrderProgress } from './order-progress.js';
import { formatOutcomeTable, type OutcomeRow } from './outcome-table.js';
import { demoScenarios, type ScenarioContext } from './scenarios.js';
import { listUrl, runUrl } from './web-ui-links.js';

/** The demo gives up on orders that have not finished by then (they normally take seconds). */
const DEMO_TIMEOUT_MS = 4 * 60_000;
/** How long the events of finished orders may take to be published, applied and received (normally a second or two). */
const MESSAGE_FLOW_BOUND_MS = 60_000;

/**
 * Runs the scripted orders against a running stack, follows them step by step, checks the
 * invariants over exactly these orders, then waits for their events to flow: outbox rows
 * published and applied by the receipts consumer, Stripe's webhooks recorded by the API.
 * Resolves true when every expectation, every invariant and the message flow held.
 */
export async function runDemo(stack: StackState, say: (line: string) => void): Promise<boolean> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection, namespace: stack.namespace, dataConverter: dataConverterFor(loadPayloadEncryptionSettings()) });
  const db = createPool({ connectionString: stack.databaseUrl, max: 4, applicationName: 'order-payments-demo' });
  const stripe = createStripeClient({ secretKey: stack.stripeSecretKey, apiBase: stack.emulatorUrl });
  const emulator = new EmulatorControl(stack.emulatorUrl);
  // Unique per run, so a second demo against the same stack starts new orders.
  const tag = `demo-${Date.now().toString(36)}`;
  const catalogue = { widgetSku: `${tag}-widget`, lastUnitSku: `${tag}-last-unit` };
  let faults: FaultRule[] = [];
  let progress: OrderProgress | null = null;
  try {
    await setStock(db, catalogue.widgetSku, 100);
    await setStock(db, catalogue.lastUnitSku, 1);
    const scenarios = demoScenarios(tag, catalogue);
    const orders = scenarios.flatMap((scenario) => scenario.orders.map((demoOrder) => ({ scenario, ...demoOrder })));
    say(`demo ${tag}: ${orders.length} orders; stock ${catalogue.widgetSku} = 100, ${catalogue.lastUnitSku} = 1`);
    for (const scenario of scenarios) say(`  ${scenario.name.padEnd(24)} ${scenario.story}`);
    say('');

    const labelWidth = Math.max(...orders.map((order) => order.label.length));
    const watcher = new OrderProgress(say, labelWidth);
    progress = watcher;
    const context: ScenarioContext = {
      emulator,
      untilStep: (orderId, step) => watcher.untilStep(workflowIdForOrder(orderId), step),
      untilActivityRunning: (orderId, activityType) => untilActivityRunning(client, workflowIdForOrder(orderId), activityType),
      async cancel(orderId, when) {
        say(`  ${new Date().toISOString().slice(11, 19)}  ${'cancel'.padEnd(labelWidth)}  cancelling ${orderId} ${when}`);
        await client.workflow.getHandle(workflowIdForOrder(orderId)).cancel();
      },
    };
    for (const scenario of scenarios) faults.push(...((await scenario.arrange?.(context)) ?? []));

    const runs = await Promise.all(
      orders.map(async (entry) => ({ entry, started: await startOrder(client, stack.taskQueue, entry.order) })),
    );
    const outcomesDone = Promise.all(runs.map(({ entry, started }) => watcher.follow(entry.label, entry.order.orderId, started)));
    const actsDone = Promise.all(scenarios.map((scenario) => (scenario.act ? scenario.act(context) : Promise.resolve())));
    const [outcomeList] = await withTimeout(Promise.all([outcomesDone, actsDone]), DEMO_TIMEOUT_MS, 'the demo orders did not finish');
    watcher.stop();

    const ours = new Set(faults.map((fault) => fault.id));
    faults = (await emulator.faults()).filter((fault) => ours.has(fault.id));
    const outcomes = new Map(outcomeList.map((outcome) => [outcome.orderId, outcome]));
    const orderIds = orders.map((entry) => entry.order.orderId);
    const report = await checkInvariants({ db, stripe, orderIds });
    const money = new Map(report.orders.map((order) => [order.orderId, order]));

    const problemsByScenario = new Map(scenarios.map((scenario) => [scenario, scenario.check(outcomes, money, faults)]));
    const rows: OutcomeRow[] = runs.map(({ entry }, index) => {
      const outcome = outcomeList[index];
      if (!outcome) throw new Error(`no outcome for order ${entry.order.orderId}`);
      return {
        scenario: entry.scenario.name,
        outcome,
        money: money.get(entry.order.orderId),
        problems: problemsByScenario.get(entry.scenario) ?? [],
        uiUrl: runUrl(stack.uiUrl, stack.namespace, outcome.workflowId, outcome.runId),
      };
    });

    say('');
    say('Outcomes:');
    say(formatOutcomeTable(rows));
    const lost = faults.find((fault) => fault.kind === 'drop_response');
    if (lost) say(`  (lost-response: Stripe's answer to the capture was dropped ${lost.fired}× and the capture retried under the same key)`);
    say('  (captured: money Stripe took; undone by: a void releases a hold for free, a refund returns captured money and Stripe keeps its fee)');
    say('');
    say(`Events: waiting (at most ${MESSAGE_FLOW_BOUND_MS / 1000} s) for the outbox to drain, the receipts consumer to apply it, and Stripe's webhooks to arrive`);
    const flowStarted = Date.now();
    // Every order that reached Stripe gets its webhooks (the hold, the capture or the void).
    const expectsWebhooks = (orderId: string) => (money.get(orderId)?.charges ?? 0) + (money.get(orderId)?.voids ?? 0) > 0;
    const flows = await waitForMessageFlow(db, orderIds, expectsWebhooks, MESSAGE_FLOW_BOUND_MS);
    const flowRows = flows.map((flow, index) => ({
      label: orders[index]?.label ?? '',
      flow,
      problems: messageFlowProblems(flow, expectsWebhooks(flow.orderId)),
    }));
    say(formatMessageFlowTable(flowRows));
    const flowProblems = flowRows.flatMap((row) => row.problems.map((problem) => `${row.flow.orderId}: ${problem}`));
    const published = flows.reduce((sum, flow) => sum + flow.published, 0);
    const applied = flows.reduce((sum, flow) => sum + flow.applied, 0);
    const webhooks = flows.reduce((sum, flow) => sum + flow.webhooks, 0);
    say(
      `  (${published} event(s) published to NATS JetStream, ${applied} applied once each by the receipts consumer, ` +
        `${webhooks} signed webhook(s) recorded in the inbox; settled in ${((Date.now() - flowStarted) / 1000).toFixed(1)} s)`,
    );
    say('');
    say(`All of this demo's runs in the Web UI: ${listUrl(stack.uiUrl, stack.namespace, `OrderId STARTS_WITH "${tag}-"`)}`);
    say(`Compensated runs only:                 ${listUrl(stack.uiUrl, stack.namespace, 'OrderStatus = "compensated"')}`);
    say('');

    const expectationProblems = [...problemsByScenario.values()].flat();
    for (const problem of expectationProblems) say(`expectation not met: ${problem}`);
    for (const problem of flowProblems) say(`event flow within ${MESSAGE_FLOW_BOUND_MS / 1000} s: ${problem}`);
    if (report.violations.length === 0) {
      say(`Invariants I1-I9: all hold for the ${orderIds.length} demo orders (checked against Stripe, the ledger, stock and orders).`);
    } else {
      say(`Invariants: ${report.violations.length} violation(s):`);
      for (const violation of report.violations) say(`  ${violation.invariant} ${violation.orderId}: ${violation.message}`);
    }
    return report.violations.length === 0 && expectationProblems.length === 0 && flowProblems.length === 0;
  } finally {
    progress?.stop();
    await Promise.all(faults.filter((fault) => fault.remaining !== 0).map((fault) => emulator.removeFault(fault.id).catch(() => undefined)));
    await db.end();
    await connection.close();
  }
}

/** Until an activity of this type has been picked up by a worker. */
function untilActivityRunning(client: Client, workflowId: string, activityType: string): Promise<void> {
  const started = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
  return untilActivityPending(client.workflow.getHandle(workflowId), (activity) => activity.activityType?.name === activityType && activity.state === started, {
    intervalMs: 100,
  });
}

async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`${what} within ${ms / 1000} s`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
