// Bundles the workflow code ahead of time for production workers: dist/workflow-bundle.js, and
// dist/workflow-bundle.traced.js with the OpenTelemetry workflow interceptors; run directly by
// `npm run build:workflows`.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { OTEL_WORKFLOW_INTERCEPTORS, PRELOADED_WORKFLOW_MODULES, WORKFLOWS_PATH } from './order-worker.js';

/** The prebundled files a production worker loads: `traced` when its tracing is on. */
export const PRODUCTION_BUNDLES = {
  untraced: fileURLToPath(new URL('../../../dist/workflow-bundle.js', import.meta.url)),
  traced: fileURLToPath(new URL('../../../dist/workflow-bundle.traced.js', import.meta.url)),
} as const;

/** The bundle a production worker loads: the traced one only when its tracing is on. */
export function productionBundle(tracing: boolean): string {
  return tracing ? PRODUCTION_BUNDLES.traced : PRODUCTION_BUNDLES.untraced;
}

export interface BundleOptions {
  /**
   * Carry the workflow's tracing interceptors (src/workflows/otel-interceptors.ts), so a worker
   * on the bundle emits the workflow's spans when its tracing is on. A worker with tracing off
   * loads the bundle without them: they would make spans for a sink that drops them.
   */
  traced: boolean;
}

/**
 * Bundles the workflow code ahead of time, as production workers should load it: the worker
 * starts in milliseconds and runs exactly the code that was reviewed and replay-tested.
 *
 * The interceptors change no command a workflow issues: every recorded history replays on both
 * bundles (test/replay), so a fleet can turn tracing on or off worker by worker, runs in flight
 * included. createOrderWorker registers their sink on any prebundled worker (a no-op one with
 * tracing off).
 */
export async function bundleWorkflows(outputPath: string, options: BundleOptions): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    preloadModules: PRELOADED_WORKFLOW_MODULES,
    ...(options.traced && { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] }),
    logger: new DefaultLogger('WARN'),
  });
  await mkdir(path.dirname(outputPath), { recursive: true });
  await writeFile(outputPath, code);
  return outputPath;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [kind, file] of Object.entries(PRODUCTION_BUNDLES)) {
    await bundleWorkflows(file, { traced: kind === 'traced' });
    console.log(`${kind} workflow bundle written to ${file}`);
  }
}
