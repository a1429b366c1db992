// The SDK's OpenTelemetry workflow interceptors, bundled into the workflow code so a traced
// worker emits spans for the run, its activities, signals, queries and updates.
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * The SDK's OpenTelemetry workflow interceptors: a span for the run, each activity it starts
 * (whose headers carry the context to the activity's own span) and each signal, query and update.
 * Spans leave the sandbox through the `exporter` sink (makeWorkflowExporter in the worker) and
 * are not exported while a workflow replays. Part of every prebundled file
 * (src/platform/temporal/bundle-workflows.ts), and of a tracing worker's bundle from source
 * (src/platform/temporal/order-worker.ts); see the README's Traces section for the rollout rule.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [new OpenTelemetryInboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
