// Polls a run's pending activities until one matches, so the demo and the chaos run can inject a
// fault at a chosen moment of the saga.
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type proto from '@temporalio/proto';

export type PendingActivity = proto.temporal.api.workflow.v1.IPendingActivityInfo;

/**
 * Polls a run's pending activities (its description) until one matches, or the run is no longer
 * running, or `maxPolls` descriptions have been read. For scripting a fault at a moment of the
 * saga from outside it: the demo's and the chaos run's cancels "while the hold is being placed".
 */
export async function untilActivityPending(
  handle: WorkflowHandle,
  matches: (activity: PendingActivity) => boolean,
  options: { intervalMs: number; maxPolls?: number },
): Promise<void> {
  for (let polls = 0; polls < (options.maxPolls ?? Number.POSITIVE_INFINITY); polls++) {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') return;
    if (description.raw.pendingActivities?.some(matches)) return;
    await sleep(options.intervalMs);
  }
}
