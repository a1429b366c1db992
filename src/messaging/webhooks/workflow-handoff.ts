// Hands a recorded webhook event to its order's workflow as a signal after the webhook is
// answered, retrying a few times; the workflow's own reconcile covers a hand-off that gives up.
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PaymentEvent } from '../../domain/payment-event.js';
import { workflowIdForOrder } from '../../domain/order-input.js';
import { paymentEventSignal } from '../../workflows/messages.js';
import { countHandoff } from '../../platform/telemetry/api-metrics.js';

/** Delivers one event to the order's workflow; resolves 'no-workflow' when none is running. */
export type SignalPaymentEvent = (orderId: string, event: PaymentEvent) => Promise<'signalled' | 'no-workflow'>;

/**
 * Signals through Temporal. Each attempt has a deadline (default 5 s): the client would otherwise
 * keep retrying an unreachable server on its own, and the hand-off decides its retries itself.
 */
export function temporalSignaller(client: Client, options: { timeoutMs?: number } = {}): SignalPaymentEvent {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (orderId, event) => {
    try {
      await client.withDeadline(Date.now() + timeoutMs, () =>
        client.workflow.getHandle(workflowIdForOrder(orderId)).signal(paymentEventSignal, event),
      );
      return 'signalled';
    } catch (error) {
      // Finished (most orders: their payment settled synchronously) or never started here.
      if (error instanceof WorkflowNotFoundError) return 'no-workflow';
      throw error;
    }
  };
}

/** The logging the hand-off needs; a pino or fastify logger fits. */
export interface HandoffLogger {
  debug(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface HandoffOptions {
  signal: SignalPaymentEvent;
  /** Called with each hand-off's end: null when delivered, otherwise why not. */
  record: (eventId: string, error: string | null) => Promise<void>;
  logger: HandoffLogger;
  /** Attempts before giving up; the workflow's own reconcile then covers the event. Default 5. */
  attempts?: number;
  /** First retry delay, doubled per attempt. Default 200 ms. */
  retryMs?: number;
}

/**
 * Hands recorded events to their orders' workflows after the webhook was answered. The event's
 * receipt is already committed, so a hand-off that fails loses nothing: it is retried a few
 * times, and past that the workflow, which waits for the signal with a timeout, asks Stripe
 * itself. Tracks what is in flight so shutdown can wait for it.
 */
export class WorkflowHandoff {
  readonly #inFlight = new Set<Promise<void>>();

  constructor(private readonly options: HandoffOptions) {}

  start(orderId: string, event: PaymentEvent): void {
    const running = this.#run(orderId, event).finally(() => this.#inFlight.delete(running));
    this.#inFlight.add(running);
  }

  /** Resolves when every hand-off started so far has ended. */
  async drain(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  async #run(orderId: string, event: PaymentEvent): Promise<void> {
    const { signal, record, logger } = this.options;
    const attempts = this.options.attempts ?? 5;
    const retryMs = this.options.retryMs ?? 200;
    let lastError = 'not attempted';
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      try {
        const outcome = await signal(orderId, event);
        await record(event.eventId, outcome === 'signalled' ? null : 'no running workflow for the order');
        countHandoff(outcome === 'signalled' ? 'signalled' : 'no_workflow');
        logger.debug({ eventId: event.eventId, orderId, outcome }, 'payment event handed off');
        return;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
        logger.warn({ eventId: event.eventId, orderId, attempt, err: error }, 'signalling the order workflow failed');
        if (attempt < attempts) await sleep(retryMs * 2 ** (attempt - 1));
      }
    }
    logger.error({ eventId: event.eventId, orderId }, 'gave up handing the event to its workflow; the workflow reconciles on its own');
    countHandoff('failed');
    await record(event.eventId, `signal failed after ${attempts} attempts: ${lastError}`).catch((error: unknown) => {
      logger.error({ eventId: event.eventId, err: error }, 'could not record the failed hand-off');
    });
  }
}
