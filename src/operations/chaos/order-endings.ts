// Waits for an order's workflow to end in a chaos run, following it through resets to the
// latest run's ending.
import type { Client } from '@temporalio/client';

export type Ending =
  /** The workflow returned: completed, declined or compensated. */
  | { kind: 'returned'; status: string }
  /** The workflow's last run ended otherwise (failed as needs_review, terminated, timed out). */
  | { kind: 'closed'; status: string; message: string };

/**
 * Waits for the order's workflow to end, following it through resets: a reset terminates the
 * run being waited on and starts a new one under the same workflow ID, so an ending that is not
 * a return is only final once the latest run is no longer running.
 */
export async function waitForEnding(client: Client, workflowId: string): Promise<Ending> {
  for (;;) {
    const handle = client.workflow.getHandle(workflowId);
    try {
      const result = (await handle.result()) as { status?: unknown };
      return { kind: 'returned', status: typeof result.status === 'string' ? result.status : 'unknown' };
    } catch (error) {
      const latest = await handle.describe();
      if (latest.status.name === 'RUNNING') continue;
      const cause = (error as { cause?: unknown }).cause;
      const message = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
      return { kind: 'closed', status: latest.status.name, message };
    }
  }
}
