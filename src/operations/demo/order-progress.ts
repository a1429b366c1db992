// Prints a line for each saga step of the demo's running orders as it happens, polled through the
// saga's status query, so the person watching never sits through a silent minute.
import { failureMessage } from '../../platform/temporal/payload-encryption/data-converter.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SagaStatus, SagaStep } from '../../domain/order-result.js';
import { resultOf, type StartedOrder } from '../../saga-client/start-order.js';
import type { OrderOutcome } from './scenarios.js';

const POLL_MS = 400;
/** Longest silence before a "still waiting" line. */
const QUIET_MS = 10_000;

/**
 * Follows running orders through the saga's `status` query and prints one line per
 * transition, so a person watching sees every step as it happens and never a silent minute.
 */
export class OrderProgress {
  private readonly latest = new Map<string, { label: string; status: SagaStatus | null; done: boolean; retries: Set<string> }>();
  private lastPrintAt = Date.now();
  private readonly quietTimer: NodeJS.Timeout;

  constructor(
    private readonly print: (line: string) => void,
    private readonly labelWidth: number,
  ) {
    this.quietTimer = setInterval(() => {
      this.remindIfQuiet();
    }, 1_000);
  }

  /** Follows one order until its run closes; resolves with how it ended. */
  async follow(label: string, orderId: string, started: StartedOrder): Promise<OrderOutcome> {
    const { handle } = started;
    this.latest.set(started.workflowId, { label, status: null, done: false, retries: new Set() });
    const result = resultOf(handle);
    const finished = result.then(() => true);
    do {
      await this.observe(started);
    } while (!(await Promise.race([finished, sleep(POLL_MS).then(() => false)])));
    const outcome = await result;
    const status = await this.observe(started);
    const description = await handle.describe();
    const entry = this.latest.get(started.workflowId);
    if (entry) entry.done = true;
    return {
      orderId,
      workflowId: started.workflowId,
      runId: started.runId,
      workflowStatus: description.status.name,
      orderStatus: status?.orderStatus ?? 'unknown',
      reason: status?.reason ?? (outcome.ok ? outcome.result.reason : outcome.failure),
    };
  }

  /** Resolves once the order's saga reports `step` (or has gone past it to the end). */
  async untilStep(workflowId: string, step: SagaStep): Promise<void> {
    for (;;) {
      const entry = this.latest.get(workflowId);
      if (entry?.status?.step === step || entry?.done) return;
      await sleep(100);
    }
  }

  stop(): void {
    clearInterval(this.quietTimer);
  }

  private async observe(started: StartedOrder): Promise<SagaStatus | null> {
    const status = await started.handle.query<SagaStatus>('status').catch(() => null);
    const entry = this.latest.get(started.workflowId);
    if (!status || !entry) return status;
    const changed = entry.status?.step !== status.step || entry.status.orderStatus !== status.orderStatus;
    entry.status = status;
    if (changed) {
      const reason = status.step === 'done' && status.reason ? `  (${truncate(status.reason, 60)})` : '';
      this.line(`${entry.label.padEnd(this.labelWidth)}  ${status.step.padEnd(16)} order ${status.orderStatus}${reason}`);
    }
    if (status.step !== 'done') await this.announceRetries(started, entry);
    return status;
  }

  /** A step being retried is part of the story: say which attempt, and what failed before it. */
  private async announceRetries(started: StartedOrder, entry: { label: string; retries: Set<string> }): Promise<void> {
    const description = await started.handle.describe().catch(() => null);
    for (const pending of description?.raw.pendingActivities ?? []) {
      const attempt = pending.attempt ?? 1;
      const name = pending.activityType?.name ?? 'activity';
      const key = `${name}#${attempt}`;
      if (attempt < 2 || entry.retries.has(key)) continue;
      entry.retries.add(key);
      const message = await failureMessage(started.handle.client.options.loadedDataConverter, pending.lastFailure).catch(() => undefined);
      const failure = message ? ` after: ${truncate(message, 70)}` : '';
      this.line(`${entry.label.padEnd(this.labelWidth)}  ${'retrying'.padEnd(16)} ${name}, attempt ${attempt}${failure}`);
    }
  }

  private line(text: string): void {
    this.lastPrintAt = Date.now();
    this.print(`  ${new Date().toISOString().slice(11, 19)}  ${text}`);
  }

  private remindIfQuiet(): void {
    if (Date.now() - this.lastPrintAt < QUIET_MS) return;
    const waiting = [...this.latest.values()].filter((entry) => !entry.done);
    if (waiting.length === 0) return;
    this.line(`still waiting on ${waiting.map((entry) => `${entry.label} (${entry.status?.step ?? 'starting'})`).join(', ')}`);
  }
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
