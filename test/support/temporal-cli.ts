// Test support: resets runs and runs other commands with the real `temporal` CLI against the test
// run's dev server.
import { execFile } from 'node:child_process';
import { inject } from 'vitest';

export type ResetTarget = { eventId: number } | { type: 'FirstWorkflowTask' | 'LastWorkflowTask' };

export interface ResetRequest {
  workflowId: string;
  runId: string;
  target: ResetTarget;
  reason: string;
}

/**
 * Resets a run with the real `temporal workflow reset` command, as an operator would, against
 * the run's dev server. Returns the new run's ID.
 */
export async function resetWorkflow(request: ResetRequest): Promise<string> {
  const targetArgs = 'eventId' in request.target ? ['--event-id', String(request.target.eventId)] : ['--type', request.target.type];
  const stdout = await runTemporalCli([
    'workflow',
    'reset',
    '--workflow-id',
    request.workflowId,
    '--run-id',
    request.runId,
    ...targetArgs,
    '--reason',
    request.reason,
  ]);
  const parsed = JSON.parse(stdout) as { runId?: unknown };
  if (typeof parsed.runId !== 'string' || parsed.runId === '') {
    throw new Error(`temporal workflow reset printed no runId: ${stdout}`);
  }
  return parsed.runId;
}

/** Runs the `temporal` CLI from the test run's setup against its dev server, with JSON output. */
export function runTemporalCli(args: string[]): Promise<string> {
  const cli = inject('temporalCli');
  const fullArgs = [...args, '--address', inject('temporalAddress'), '--namespace', 'default', '--output', 'json', '--color', 'never'];
  return new Promise((resolve, reject) => {
    execFile(cli, fullArgs, { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`temporal ${fullArgs.join(' ')} failed: ${error.message}\n${stderr}`));
        return;
      }
      resolve(stdout);
    });
  });
}
