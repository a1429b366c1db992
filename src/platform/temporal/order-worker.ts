// Creates the worker that runs the saga and its activities, for the worker process and the tests
// alike: bundling, preloaded modules, interceptors, tracing sinks and capacity settings.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { Worker, type InjectedSinks, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.js';
import { makeWorkflowExporter, type OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';
import { activityTracing } from '../telemetry/activity-tracing.js';
import type { Tracing } from '../telemetry/tracing.js';
import { heartbeatWhileRunning } from './heartbeat-interceptor.js';
import { workerDeploymentOptions, type WorkerDeployment } from './worker-deployment.js';

/**
 * Sibling modules named by path (for the bundler) end as this file does: .ts under tsx in src/,
 * .js in the compiled dist/ (npm run build), so a compiled worker finds them too.
 */
const OWN_EXTENSION = path.extname(fileURLToPath(import.meta.url));

/**
 * The workflow's tracing interceptors (src/workflows/otel-interceptors.ts): in the traced
 * prebundled file (bundle-workflows.ts), and in a tracing worker's bundle from source.
 */
export const OTEL_WORKFLOW_INTERCEPTORS = fileURLToPath(new URL(`../../workflows/otel-interceptors${OWN_EXTENSION}`, import.meta.url));

/** Workflow source, for development workers; production loads the prebundled file. */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../../workflows/index${OWN_EXTENSION}`, import.meta.url));

/**
 * Modules the workflow bundle evaluates once per worker instead of once per run. With a reused
 * V8 context, every new run (and every replay after a cache eviction) evaluates its whole import
 * graph again and keeps its own copy while cached; evaluating zod and building the order schema
 * was the largest single cost on the workflow thread in the benchmark's profile. Neither keeps
 * per-run state. The SDK deep-freezes what a preloaded module exports, which is why the schema
 * the workflow parses with is not exported (see order-input.ts).
 */
export const PRELOADED_WORKFLOW_MODULES = ['zod', fileURLToPath(new URL(`../../domain/order-input${OWN_EXTENSION}`, import.meta.url))];

/**
 * The worker's capacity settings. The benchmark's baseline worker runs with these too, so the
 * saga is measured against a ceiling set by the same worker.
 */
export const ORDER_WORKER_TUNING = {
  // Activities mostly wait on Stripe and Postgres.
  maxConcurrentActivityTaskExecutions: 50,
  // Runs kept in the sticky cache. The SDK's default is derived from the V8 heap limit, so a
  // heap cap (--max-old-space-size, usual in containers) silently shrinks it: at 128 MB it is 10,
  // and every run is evicted and replayed from its history between tasks. A thousand in flight
  // is this worker's sizing (npm run bench measures its memory with that many).
  maxCachedWorkflows: 1000,
} as const satisfies Partial<WorkerOptions>;

export interface OrderWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** The encrypting data converter (payload-encryption/data-converter.ts, dataConverterFor): required, so no worker writes plain payloads. */
  dataConverter: DataConverter;
  /**
   * The deployment version this worker polls as: its workflows run PINNED to it (worker-deployment.ts).
   * Its build ID must be the one of the workflow code below (loadWorkflowCode gives both).
   */
  deployment: WorkerDeployment;
  /**
   * The workflow code: a prebundled file (`npm run build:workflows`) or a bundle made in memory
   * (bundle-workflows.ts, loadWorkflowCode). Unset: bundled from source at start.
   */
  workflowBundle?: { codePath: string } | { code: string } | undefined;
  /** Activities run at once. Default ORDER_WORKER_TUNING's. */
  maxConcurrentActivityTaskExecutions?: number;
  /**
   * How long in-flight activities get to finish after shutdown is requested. Default 30 s:
   * longer than the Stripe timeout, so a charge in flight ends with its outcome recorded.
   */
  shutdownGraceTimeMs?: number;
  /**
   * Traces, from startTracing: a span per activity attempt, and the workflow's own spans (from
   * the interceptors the traced prebundled file carries, or added to the bundle from source), so
   * one trace follows the run. Default off.
   */
  tracing?: Tracing | null;
}

/**
 * Where the workflow interceptors' spans leave the sandbox (the `exporter` sink): the tracing's
 * span processor, or, with tracing off, nowhere (a worker given the traced prebundled file runs
 * the interceptors either way, and an unregistered sink is logged as an error on every span).
 */
export function workflowSpanSinks(tracing: Tracing | null): InjectedSinks<OpenTelemetrySinks> {
  if (!tracing) return { exporter: { export: { fn: () => undefined } } };
  const exporter = makeWorkflowExporter(tracing.spanProcessor, tracing.resource);
  // The SDK's exporter copies the WorkflowInfo it is handed onto every span as attributes: the
  // whole of it, search attributes, memo and build IDs included, nested objects that are not
  // valid attribute values and that the trace store would serialize again for every span. A span
  // needs to say which run it belongs to, so that is all the exporter is handed (it only spreads
  // the object, hence the cast).
  return { exporter: { export: { ...exporter.export, fn: (info, spans) => exporter.export.fn(runIdentity(info) as WorkflowInfo, spans) } } };
}

/** The attributes a workflow span carries about its run: which one it is, never its input, memo or search attributes. */
export type RunIdentity = Pick<WorkflowInfo, 'workflowId' | 'runId' | 'originalExecutionRunId' | 'workflowType' | 'taskQueue' | 'namespace' | 'attempt'>;

export function runIdentity({ workflowId, runId, originalExecutionRunId, workflowType, taskQueue, namespace, attempt }: WorkflowInfo): RunIdentity {
  return { workflowId, runId, originalExecutionRunId, workflowType, taskQueue, namespace, attempt };
}

/** The worker that runs the saga and its activities: one shape for the process and the tests. */
export function createOrderWorker(options: OrderWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    dataConverter: options.dataConverter,
    workerDeploymentOptions: workerDeploymentOptions(options.deployment),
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : {
          workflowsPath: WORKFLOWS_PATH,
          bundlerOptions: { preloadModules: PRELOADED_WORKFLOW_MODULES },
        }),
    activities: createActivities(options.deps),
    interceptors: {
      activity: [...(options.tracing ? activityTracing : []), heartbeatWhileRunning],
      ...(options.tracing && !options.workflowBundle && { workflowModules: [OTEL_WORKFLOW_INTERCEPTORS] }),
    },
    // A prebundled file may carry the workflow interceptors (the traced one), so it always gets their sink.
    ...((options.tracing || options.workflowBundle) && { sinks: workflowSpanSinks(options.tracing ?? null) }),
    ...ORDER_WORKER_TUNING,
    ...(options.maxConcurrentActivityTaskExecutions !== undefined && {
      maxConcurrentActivityTaskExecutions: options.maxConcurrentActivityTaskExecutions,
    }),
    shutdownGraceTime: options.shutdownGraceTimeMs ?? 30_000,
  });
}
