// The demo's scripted orders, one per path the saga can take, each with the faults it injects and
// the outcome it expects.
import { DEFAULT_TENANT_ID, type OrderInput } from '../../domain/order-input.js';
import type { OrderReconciliation } from '../reconcile/invariant-checker.js';
import type { SagaStep } from '../../domain/order-result.js';
import type { FaultRule } from '@order-payments/stripe-emulator';
import type { EmulatorControl } from './emulator-control.js';

/** How one demo order ended, as the workflow and the status query tell it. */
export interface OrderOutcome {
  orderId: string;
  workflowId: string;
  runId: string;
  /** Temporal's view: COMPLETED, CANCELLED, FAILED, ... */
  workflowStatus: string;
  /** The saga's view: completed, declined, compensated, needs_review, ... */
  orderStatus: string;
  reason: string | null;
}

export interface DemoOrder {
  /** Short name shown in the progress lines and the table. */
  label: string;
  order: OrderInput;
}

export interface ScenarioContext {
  emulator: EmulatorControl;
  /** Resolves once the order's saga reports this step. */
  untilStep: (orderId: string, step: SagaStep) => Promise<void>;
  /** Resolves once a worker has started the order's activity of this type. */
  untilActivityRunning: (orderId: string, activityType: string) => Promise<void>;
  /** Cancels the order's workflow; `when` says, for the progress line, what it was doing. */
  cancel: (orderId: string, when: string) => Promise<void>;
}

export interface Scenario {
  name: string;
  /** What the scenario shows, in one line. */
  story: string;
  orders: DemoOrder[];
  /** Before the orders start: fault rules. */
  arrange?(context: ScenarioContext): Promise<FaultRule[]>;
  /** While the orders run. */
  act?(context: ScenarioContext): Promise<void>;
  /** What must be true of the outcomes and the money; each string is a broken expectation. */
  check(outcomes: Map<string, OrderOutcome>, money: Map<string, OrderReconciliation>, faults: FaultRule[]): string[];
}

export interface DemoCatalogue {
  /** Plenty of stock. */
  widgetSku: string;
  /** One unit, for the race. */
  lastUnitSku: string;
}

const expectOrder = (outcome: OrderOutcome | undefined, orderStatus: string, workflowStatus: string): string[] => {
  if (!outcome) return ['no outcome recorded'];
  const problems: string[] = [];
  if (outcome.orderStatus !== orderStatus) problems.push(`${outcome.orderId} ended ${outcome.orderStatus}, expected ${orderStatus}`);
  if (outcome.workflowStatus !== workflowStatus) {
    problems.push(`${outcome.orderId}'s workflow is ${outcome.workflowStatus}, expected ${workflowStatus}`);
  }
  return problems;
};

/** What Stripe holds for the order, as the reconciliation counted it: captures, refunds and voided holds. */
const expectMoney = (
  money: OrderReconciliation | undefined,
  orderId: string,
  expected: Pick<OrderReconciliation, 'charges' | 'refunds' | 'voids'>,
): string[] => {
  const actual = { charges: money?.charges ?? 0, refunds: money?.refunds ?? 0, voids: money?.voids ?? 0 };
  return (['charges', 'refunds', 'voids'] as const)
    .filter((field) => actual[field] !== expected[field])
    .map((field) => `${orderId} has ${actual[field]} ${field === 'charges' ? 'capture' : field.replace(/s$/, '')}(s) at Stripe, expected ${expected[field]}`);
};

/** The scripted orders: one per path the saga can take. Order IDs start with `tag`. */
export function demoScenarios(tag: string, catalogue: DemoCatalogue): Scenario[] {
  const order = (suffix: string, overrides: Partial<OrderInput>): OrderInput => ({
    orderId: `${tag}-${suffix}`,
    tenantId: DEFAULT_TENANT_ID,
    customerId: 'cust-ada',
    amount: 2500,
    currency: 'usd',
    paymentMethod: 'pm_card_visa',
    sku: catalogue.widgetSku,
    quantity: 1,
    ...overrides,
  });
  const success = order('success', { amount: 1999 });
  const declined = order('declined', { customerId: 'cust-bob', amount: 4200, paymentMethod: 'pm_card_visa_chargeDeclined' });
  const raceAda = order('race-ada', { amount: 999, sku: catalogue.lastUnitSku });
  const raceBob = order('race-bob', { customerId: 'cust-bob', amount: 999, sku: catalogue.lastUnitSku });
  const lost = order('lost-response', { customerId: 'cust-cy', amount: 3100 });
  const beforeCapture = order('cancelled-before-capture', { customerId: 'cust-dee', amount: 5000, quantity: 2 });
  const afterCapture = order('cancelled-after-capture', { customerId: 'cust-eve', amount: 6400 });

  return [
    {
      name: 'success',
      story: 'stock reserved, the card held, the hold captured, confirmed',
      orders: [{ label: 'success', order: success }],
      check: (outcomes, money) => [...expectOrder(outcomes.get(success.orderId), 'completed', 'COMPLETED'), ...expectMoney(money.get(success.orderId), success.orderId, { charges: 1, refunds: 0, voids: 0 })],
    },
    {
      name: 'declined card',
      story: 'Stripe declines the hold: nothing held, the reservation released',
      orders: [{ label: 'declined', order: declined }],
      check: (outcomes, money) => [...expectOrder(outcomes.get(declined.orderId), 'declined', 'COMPLETED'), ...expectMoney(money.get(declined.orderId), declined.orderId, { charges: 0, refunds: 0, voids: 0 })],
    },
    {
      name: 'race for the last unit',
      story: 'two customers, one unit: the loser never reaches Stripe, so there is nothing to refund',
      orders: [
        { label: 'race-ada', order: raceAda },
        { label: 'race-bob', order: raceBob },
      ],
      check(outcomes, money) {
        const statuses = [outcomes.get(raceAda.orderId)?.orderStatus, outcomes.get(raceBob.orderId)?.orderStatus].sort();
        const problems = statuses.join(',') === 'compensated,completed' ? [] : [`the race ended ${statuses.join(' and ')}, expected one completed and one compensated`];
        for (const racer of [raceAda, raceBob]) {
          if ((money.get(racer.orderId)?.refunds ?? 0) > 0) problems.push(`${racer.orderId} was refunded: the loser of the race must never be charged`);
        }
        return problems;
      },
    },
    {
      name: 'lost Stripe response',
      story: 'Stripe captures but the answer is lost twice; the retry replays the key: captured once',
      orders: [{ label: 'lost-response', order: lost }],
      async arrange({ emulator }) {
        return [
          await emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: lost.orderId, count: 2 }),
        ];
      },
      check(outcomes, money, faults) {
        const problems = [...expectOrder(outcomes.get(lost.orderId), 'completed', 'COMPLETED'), ...expectMoney(money.get(lost.orderId), lost.orderId, { charges: 1, refunds: 0, voids: 0 })];
        const fired = faults.find((fault) => fault.orderId === lost.orderId)?.fired ?? 0;
        if (fired !== 2) problems.push(`the lost-response fault fired ${fired} times, expected 2`);
        return problems;
      },
    },
    {
      name: 'cancelled before capture',
      story: 'cancelled while the hold is being placed: the hold is voided, free; no refund',
      orders: [{ label: 'cancelled-before-capture', order: beforeCapture }],
      async arrange({ emulator }) {
        return [
          await emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: beforeCapture.orderId, latencyMs: 4_000 }),
        ];
      },
      async act({ untilStep, untilActivityRunning, cancel }) {
        await untilStep(beforeCapture.orderId, 'authorizing');
        await untilActivityRunning(beforeCapture.orderId, 'authorizePayment');
        await cancel(beforeCapture.orderId, 'while its hold is being placed');
      },
      check: (outcomes, money) => [
        ...expectOrder(outcomes.get(beforeCapture.orderId), 'compensated', 'CANCELLED'),
        ...expectMoney(money.get(beforeCapture.orderId), beforeCapture.orderId, { charges: 0, refunds: 0, voids: 1 }),
      ],
    },
    {
      name: 'cancelled after capture',
      story: 'cancelled while the hold is being captured: the money moved, so it is refunded, once',
      orders: [{ label: 'cancelled-after-capture', order: afterCapture }],
      async arrange({ emulator }) {
        return [
          await emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents/:id/capture', orderId: afterCapture.orderId, latencyMs: 4_000 }),
        ];
      },
      async act({ untilStep, untilActivityRunning, cancel }) {
        await untilStep(afterCapture.orderId, 'capturing');
        await untilActivityRunning(afterCapture.orderId, 'capturePayment');
        await cancel(afterCapture.orderId, 'while its hold is being captured');
      },
      check: (outcomes, money) => [
        ...expectOrder(outcomes.get(afterCapture.orderId), 'compensated', 'CANCELLED'),
        ...expectMoney(money.get(afterCapture.orderId), afterCapture.orderId, { charges: 1, refunds: 1, voids: 0 }),
      ],
    },
  ];
}
