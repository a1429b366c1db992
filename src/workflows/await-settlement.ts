import { ActivityCancellationType, condition, proxyActivities } from '@temporalio/workflow';
import type { OrderActivities } from '../activities/index.js';
import type { ChargeOutcome, ChargeResult, PendingCharge } from '../activities/types.js';
import { ActivityId } from '../domain/activity-ids.js';
import type { PaymentEvent } from '../domain/payment-event.js';
import { HEARTBEAT_TIMEOUT } from './activity-options.js';

/**
 * The settlement reads Stripe (and, past the deadline, cancels under its own key). It is retried
 * until Stripe answers: an outage delays a settlement, it must not compensate the order.
 */
const settlement = proxyActivities<OrderActivities>({
  startToCloseTimeout: '60s',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/** Events after which a settling PaymentIntent has an outcome worth asking Stripe about. */
const SETTLING_ENDS = new Set(['payment_intent.succeeded', 'payment_intent.payment_failed', 'payment_intent.canceled']);

/**
 * The payment events the API signalled, each once (by event ID, since the API may signal an
 * event again after a failed hand-off attempt that in fact arrived).
 */
export class PaymentEvents {
  readonly #seen = new Set<string>();
  #waiting: PaymentEvent[] = [];

  receive(event: PaymentEvent): void {
    if (this.#seen.has(event.eventId)) return;
    this.#seen.add(event.eventId);
    if (SETTLING_ENDS.has(event.type)) this.#waiting.push(event);
  }

  /** The first unconsumed event that ends the settling of this PaymentIntent. */
  endOf(paymentIntentId: string): PaymentEvent | undefined {
    return this.#waiting.find((event) => event.paymentIntentId === paymentIntentId);
  }

  /** Takes the events about this PaymentIntent, so the next wait waits for a new one. */
  take(paymentIntentId: string): PaymentEvent | undefined {
    const first = this.endOf(paymentIntentId);
    this.#waiting = this.#waiting.filter((event) => event.paymentIntentId !== paymentIntentId);
    return first;
  }
}

export interface SettlementWait {
  orderId: string;
  originalRunId: string;
  events: PaymentEvents;
  /** Told each time the payment is found still settling. */
  onSettling(pending: PendingCharge): void;
}

/**
 * The asynchronous branch of the charge: the payment was accepted but not settled. Waits for the
 * webhook's signal, at most `recheckAfterMs`, then settles: with the signal, at once; without it,
 * by asking Stripe (the reconcile that makes a lost webhook cost time, never money). Still
 * settling: waits again. The settlement records the ledger charge under the charge's key, so
 * however often it runs the money is booked once; a failure or an expiry is thrown as a decline.
 *
 * Only a pending charge reaches this code: histories of synchronous payments never contain its
 * timers and activities, so they replay unchanged without a `patched()` marker.
 */
export async function awaitSettlement(pending: PendingCharge, wait: SettlementWait): Promise<ChargeResult> {
  let outcome: ChargeOutcome = pending;
  let check = 0;
  while (outcome.status !== 'succeeded') {
    const settling: PendingCharge = outcome;
    wait.onSettling(settling);
    await condition(() => wait.events.endOf(settling.paymentIntentId) !== undefined, settling.recheckAfterMs);
    const event = wait.events.take(settling.paymentIntentId);
    check += 1;
    outcome = await settlement.settlePayment.executeWithOptions(
      {
        activityId: `${ActivityId.settlePayment}-${check}`,
        summary: event
          ? `Stripe: settle ${settling.paymentIntentId} after webhook ${event.type} (${event.eventId})`
          : `Stripe: no webhook within ${settling.recheckAfterMs} ms; ask for ${settling.paymentIntentId}`,
      },
      [
        {
          orderId: wait.orderId,
          originalRunId: wait.originalRunId,
          chargeActivityId: ActivityId.chargePayment,
          trigger: event ? { kind: 'webhook', eventId: event.eventId } : { kind: 'recheck' },
        },
      ],
    );
  }
  return outcome;
}
