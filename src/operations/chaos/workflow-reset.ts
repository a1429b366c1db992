// Chaos fault: resets a running workflow with the real `temporal workflow reset` CLI, as an
// operator would.
import { execa } from 'execa';

export type ResetType = 'FirstWorkflowTask' | 'LastWorkflowTask';

export interface ResetOutcome {
  workflowId: string;
  type: ResetType;
  ok: boolean;
  newRunId: string | null;
  error: string | null;
}

/**
 * Resets a running workflow with the real `temporal workflow reset`, as an operator would. The
 * new run keeps the original run ID in its workflow info, so every activity it re-runs derives
 * the keys the first run used.
 */
export async function resetWorkflow(options: {
  cli: string;
  address: string;
  namespace: string;
  workflowId: string;
  type: ResetType;
}): Promise<ResetOutcome> {
  const result = await execa(
    options.cli,
    [
      'workflow',
      'reset',
      '--workflow-id',
      options.workflowId,
      '--type',
      options.type,
      '--reason',
      'chaos run: reset in flight',
      '--address',
      options.address,
      '--namespace',
      options.namespace,
      '--output',
      'json',
      '--color',
      'never',
    ],
    { reject: false, timeout: 60_000 },
  );
  const base = { workflowId: options.workflowId, type: options.type };
  if (result.exitCode !== 0) {
    return { ...base, ok: false, newRunId: null, error: (result.stderr || result.stdout || result.shortMessage || `exit code ${String(result.exitCode)}`).trim() };
  }
  try {
    const parsed = JSON.parse(result.stdout) as { runId?: unknown };
    return { ...base, ok: true, newRunId: typeof parsed.runId === 'string' ? parsed.runId : null, error: null };
  } catch {
    return { ...base, ok: true, newRunId: null, error: null };
  }
}
