// Bundles the workflow code ahead of time into dist/workflow-bundle.js for production workers,
// with the OpenTelemetry workflow interceptors; run directly by `npm run build:workflows`.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { OTEL_WORKFLOW_INTERCEPTORS, PRELOADED_WORKFLOW_MODULES, WORKFLOWS_PATH } from './order-worker.js';

export const DEFAULT_BUNDLE_PATH = fileURLToPath(new URL('../../../dist/workflow-bundle.js', import.meta.url));

/**
 * Bundles the workflow code ahead of time, as production workers should load it: the worker
 * starts in milliseconds and runs exactly the code that was reviewed and replay-tested.
 *
 * The bundle carries the SDK's OpenTelemetry workflow interceptors (src/workflows/otel-interceptors.ts),
 * so a worker on it emits the workflow's spans when tracing is on, as one bundling from source
 * does; createOrderWorker registers their sink either way (a no-op one with tracing off). The
 * interceptors change no command a workflow issues: every recorded history replays on this
 * bundle (test/replay).
 */
export async function bundleWorkflows(outputPath = DEFAULT_BUNDLE_PATH): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    preloadModules: PRELOADED_WORKFLOW_MODULES,
    workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS],
    logger: new DefaultLogger('WARN'),
  });
  await mkdir(path.dirname(outputPath), { recursive: true });
  await writeFile(outputPath, code);
  return outputPath;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const written = await bundleWorkflows(process.argv[2]);
  console.log(`workflow bundle written to ${written}`);
}
