// Bundles the workflow code: ahead of time for production workers (dist/workflow-bundle.js, and
// dist/workflow-bundle.traced.js with the OpenTelemetry workflow interceptors, beside the build
// ID both share), or in memory for a worker started from source. Run directly by
// `npm run build:workflows`.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { ConfigError } from '../config/config-error.js';
import { FAILURE_CONVERTER_PATH } from './payload-encryption/data-converter.js';
import { OTEL_WORKFLOW_INTERCEPTORS, PRELOADED_WORKFLOW_MODULES, WORKFLOWS_PATH } from './order-worker.js';
import { workflowBuildIdOf } from './worker-deployment.js';

export const BUNDLE_FILES = {
  untraced: 'workflow-bundle.js',
  traced: 'workflow-bundle.traced.js',
  /** The build ID of both bundles (worker-deployment.ts, workflowBuildIdOf). */
  buildId: 'workflow-build-id',
} as const;

/** Where `npm run build` writes the bundles a production worker loads. */
export const PRODUCTION_BUNDLE_DIR = fileURLToPath(new URL('../../../dist', import.meta.url));

/** The prebundled file a production worker loads: the traced one only when its tracing is on. */
export function productionBundle(tracing: boolean): string {
  return path.join(PRODUCTION_BUNDLE_DIR, tracing ? BUNDLE_FILES.traced : BUNDLE_FILES.untraced);
}

/**
 * The workflow code as a worker runs it. `traced` carries the workflow's tracing interceptors
 * (src/workflows/otel-interceptors.ts), for a worker whose tracing is on; they change no command a
 * workflow issues (every recorded history replays on both, test/replay), so a fleet can turn
 * tracing on or off worker by worker, runs in flight included.
 */
export async function bundleWorkflowSource(options: { traced: boolean }): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    preloadModules: PRELOADED_WORKFLOW_MODULES,
    // The workflow's own failures carry their messages encoded, as every worker's do (data-converter.ts).
    failureConverterPath: FAILURE_CONVERTER_PATH,
    ...(options.traced && { workflowInterceptorModules: [OTEL_WORKFLOW_INTERCEPTORS] }),
    logger: new DefaultLogger('WARN'),
  });
  return code;
}

export interface WrittenBundles {
  untraced: string;
  traced: string;
  buildId: string;
}

/**
 * Bundles the workflow code ahead of time, as production workers should load it: the worker
 * starts in milliseconds and runs exactly the code that was reviewed and replay-tested. Writes
 * both bundles and their build ID into `dir`.
 */
export async function writeWorkflowBundles(dir: string): Promise<WrittenBundles> {
  const untracedCode = await bundleWorkflowSource({ traced: false });
  const tracedCode = await bundleWorkflowSource({ traced: true });
  const buildId = workflowBuildIdOf(untracedCode);
  await mkdir(dir, { recursive: true });
  const untraced = path.join(dir, BUNDLE_FILES.untraced);
  const traced = path.join(dir, BUNDLE_FILES.traced);
  await writeFile(untraced, untracedCode);
  await writeFile(traced, tracedCode);
  await writeFile(path.join(dir, BUNDLE_FILES.buildId), `${buildId}\n`);
  return { untraced, traced, buildId };
}

/** The build ID written beside a prebundled file by writeWorkflowBundles. */
export async function buildIdBeside(bundlePath: string): Promise<string> {
  const file = path.join(path.dirname(bundlePath), BUNDLE_FILES.buildId);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    throw new ConfigError([`WORKFLOW_BUNDLE_PATH: no ${BUNDLE_FILES.buildId} beside ${bundlePath}: build the bundles with npm run build, or set WORKER_BUILD_ID`]);
  }
}

/** The workflow code a worker runs and the build ID it runs as. */
export interface WorkflowCode {
  bundle: { codePath: string } | { code: string };
  buildId: string;
}

/**
 * The workflow code for a worker: a prebundled file with the build ID beside it, or, from source,
 * bundled now (the untraced bundle always, for the build ID; the traced one too when tracing).
 */
export async function loadWorkflowCode(options: { bundlePath: string | undefined; tracing: boolean; buildIdOverride?: string | undefined }): Promise<WorkflowCode> {
  if (options.bundlePath) {
    const buildId = options.buildIdOverride ?? (await buildIdBeside(options.bundlePath));
    return { bundle: { codePath: options.bundlePath }, buildId };
  }
  const untraced = await bundleWorkflowSource({ traced: false });
  const code = options.tracing ? await bundleWorkflowSource({ traced: true }) : untraced;
  return { bundle: { code }, buildId: options.buildIdOverride ?? workflowBuildIdOf(untraced) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const written = await writeWorkflowBundles(PRODUCTION_BUNDLE_DIR);
  console.log(`workflow bundles written to ${written.untraced} and ${written.traced}; build ID ${written.buildId}`);
}
