// Starts an order's saga at most once on Temporal's workflow-ID policies (attach to a running
// run, never restart a finished one), refusing an order ID reused for a different order.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { parseOrderInput, sameOrder, workflowIdForOrder, type OrderInput } from '../domain/order-input.js';
import type { OrderResult } from '../domain/order-result.js';
import { OrderIdAttribute, OrderStatusAttribute } from '../platform/temporal/search-attributes.js';
import type { orderPaymentSaga } from '../workflows/index.js';

/** How the start request met the order's workflow ID. */
export type StartOutcome =
  /** A new run was started for the order. */
  | 'started'
  /** A run for the order was already going; this request attached to it. */
  | 'attached'
  /** The order's run had already finished; nothing was started and nothing charged. */
  | 'already-finished';

export interface StartedOrder {
  outcome: StartOutcome;
  workflowId: string;
  runId: string;
  handle: WorkflowHandle<typeof orderPaymentSaga>;
}

/** The same order ID was used for a different order: I7 at the door. */
export class OrderIdConflictError extends Error {
  override readonly name = 'OrderIdConflictError';
  constructor(
    readonly orderId: string,
    readonly existing?: unknown,
  ) {
    super(`order ID '${orderId}' is already used by a different order${existing === undefined ? '' : `: ${JSON.stringify(existing)}`}`);
  }
}

/**
 * Starts the order's saga at most once, on Temporal's own workflow-ID policies: a running run
 * is attached to (USE_EXISTING), a finished one is never started again (REJECT_DUPLICATE), so
 * a starter retried after a timeout, or run twice by a person, charges nobody twice. The
 * describe beforehand only chooses what to report; the policies are what hold under a race.
 * Either way the existing run's input must be this order, or OrderIdConflictError is thrown.
 */
export async function startOrder(client: Client, taskQueue: string, order: OrderInput): Promise<StartedOrder> {
  const workflowId = workflowIdForOrder(order.orderId);
  const existing = await describeIfExists(client, workflowId);
  if (existing) {
    await assertSameOrder(client, workflowId, existing.runId, order);
    const handle = client.workflow.getHandle<typeof orderPaymentSaga>(workflowId, existing.runId);
    const outcome = existing.status.name === 'RUNNING' ? 'attached' : 'already-finished';
    return { outcome, workflowId, runId: existing.runId, handle };
  }
  try {
    const handle = await client.workflow.start<typeof orderPaymentSaga>('orderPaymentSaga', orderStartOptions(taskQueue, order));
    // A concurrent starter may have won the race; USE_EXISTING then handed us its run.
    await assertSameOrder(client, workflowId, handle.firstExecutionRunId, order);
    return { outcome: 'started', workflowId, runId: handle.firstExecutionRunId, handle };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    // It started and finished between our describe and our start.
    const finished = await describeIfExists(client, workflowId);
    if (!finished) throw error;
    await assertSameOrder(client, workflowId, finished.runId, order);
    const handle = client.workflow.getHandle<typeof orderPaymentSaga>(workflowId, finished.runId);
    return { outcome: 'already-finished', workflowId, runId: finished.runId, handle };
  }
}

/**
 * How every order's workflow is started, by a plain start or by Update-with-Start: its ID from
 * the order ID; a running run is attached to (USE_EXISTING) and a finished one never started
 * again (REJECT_DUPLICATE); the order's search attributes and what the Web UI shows of it.
 */
export function orderStartOptions(taskQueue: string, order: OrderInput) {
  return {
    workflowId: workflowIdForOrder(order.orderId),
    taskQueue,
    args: [order] as [OrderInput],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    typedSearchAttributes: [
      { key: OrderIdAttribute, value: order.orderId },
      { key: OrderStatusAttribute, value: 'pending' },
    ],
    // The order and the step only, never the customer, the card or the amount: encrypted like every
    // payload, and safe to show where nothing decodes them (docs/encryption.md).
    staticSummary: `Order ${order.orderId}`,
    // Markdown in the Web UI: the key's shape goes in a code span, or `<...>` is read as HTML.
    staticDetails: `Reserve, hold, capture, confirm. Every side effect is keyed \`<original run ID>/<activity ID>\`.`,
  };
}

/** The result of a run, or the failure that ended it. */
export async function resultOf(
  handle: WorkflowHandle<typeof orderPaymentSaga>,
): Promise<{ ok: true; result: OrderResult } | { ok: false; failure: string }> {
  try {
    return { ok: true, result: await handle.result() };
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    return { ok: false, failure: cause?.message ?? (error instanceof Error ? error.message : String(error)) };
  }
}

export async function describeIfExists(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | null> {
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

export async function assertSameOrder(client: Client, workflowId: string, runId: string, order: OrderInput): Promise<void> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  // The history holds the payloads as stored (encrypted): the client's codecs open them first.
  const converter = client.options.loadedDataConverter;
  let [first] = payloads;
  for (const codec of [...converter.payloadCodecs].reverse()) if (first) [first] = await codec.decode([first]);
  const existing: unknown = first ? converter.payloadConverter.fromPayload(first) : undefined;
  // The run's input, read as an order (anything else is not this order): the saga's own comparison.
  const running = parseOrderInput(existing);
  if (!running.ok || !sameOrder(running.value, order)) throw new OrderIdConflictError(order.orderId, existing);
}
