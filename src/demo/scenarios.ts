import type { OrderInput } from '../domain/order-input.js';
import type { SagaStep } from '../domain/order-result.js';
import type { FaultRule } from '../stripe-emulator/index.js';
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
  cancel: (orderId: string) => Promise<void>;
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
  /** What must be true of the outcomes; each string is a broken expectation. */
  check(outcomes: Map<string, OrderOutcome>, faults: FaultRule[]): string[];
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

/** The scripted orders: one per path the saga can take. Order IDs start with `tag`. */
export function demoScenarios(tag: string, catalogue: DemoCatalogue): Scenario[] {
  const order = (suffix: string, overrides: Partial<OrderInput>): OrderInput => ({
    orderId: `${tag}-${suffix}`,
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
  const cancelled = order('cancelled', { customerId: 'cust-dee', amount: 5000, quantity: 2 });

  return [
    {
      name: 'success',
      story: 'charged, stock allocated, confirmed',
      orders: [{ label: 'success', order: success }],
      check: (outcomes) => expectOrder(outcomes.get(success.orderId), 'completed', 'COMPLETED'),
    },
    {
      name: 'declined card',
      story: 'Stripe declines the card: nothing charged, nothing to undo',
      orders: [{ label: 'declined', order: declined }],
      check: (outcomes) => expectOrder(outcomes.get(declined.orderId), 'declined', 'COMPLETED'),
    },
    {
      name: 'race for the last unit',
      story: 'two customers, one unit: both are charged, the loser is refunded',
      orders: [
        { label: 'race-ada', order: raceAda },
        { label: 'race-bob', order: raceBob },
      ],
      check(outcomes) {
        const statuses = [outcomes.get(raceAda.orderId)?.orderStatus, outcomes.get(raceBob.orderId)?.orderStatus].sort();
        return statuses.join(',') === 'compensated,completed'
          ? []
          : [`the race ended ${statuses.join(' and ')}, expected one completed and one compensated`];
      },
    },
    {
      name: 'lost Stripe response',
      story: 'Stripe charges but the response is lost twice; the retry replays the key: one charge',
      orders: [{ label: 'lost-response', order: lost }],
      async arrange({ emulator }) {
        return [
          await emulator.addFault({ kind: 'drop_response', method: 'POST', path: '/v1/payment_intents', orderId: lost.orderId, count: 2 }),
        ];
      },
      check(outcomes, faults) {
        const problems = expectOrder(outcomes.get(lost.orderId), 'completed', 'COMPLETED');
        const fired = faults.find((fault) => fault.orderId === lost.orderId)?.fired ?? 0;
        if (fired !== 2) problems.push(`the lost-response fault fired ${fired} times, expected 2`);
        return problems;
      },
    },
    {
      name: 'cancelled order',
      story: 'cancelled while its charge is in flight: the charge finishes, then is refunded',
      orders: [{ label: 'cancelled', order: cancelled }],
      async arrange({ emulator }) {
        return [
          await emulator.addFault({ kind: 'latency', method: 'POST', path: '/v1/payment_intents', orderId: cancelled.orderId, latencyMs: 4_000 }),
        ];
      },
      async act({ untilStep, untilActivityRunning, cancel }) {
        await untilStep(cancelled.orderId, 'charging');
        await untilActivityRunning(cancelled.orderId, 'chargePayment');
        await cancel(cancelled.orderId);
      },
      check: (outcomes) => expectOrder(outcomes.get(cancelled.orderId), 'compensated', 'CANCELLED'),
    },
  ];
}
