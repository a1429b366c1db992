// Proves turning tracing on cannot break a run in flight: every recorded history replays with the
// OpenTelemetry workflow interceptors, from source and from the traced prebundled file, exporting
// nothing; and on the untraced prebundled file.
import { readFile } from 'node:fs/promises';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { OTEL_WORKFLOW_INTERCEPTORS, PRELOADED_WORKFLOW_MODULES, WORKFLOWS_PATH, workflowSpanSinks } from '../../src/platform/temporal/order-worker.js';
import { loadRecordedHistories, recordedDataConverter } from '../support/recorded-histories.js';

/**
 * Turning tracing on must not break a run in flight: every recorded history (recorded without the
 * OpenTelemetry workflow interceptors) replays with them, as a tracing worker runs the workflows
 * (src/platform/temporal/order-worker.ts with tracing, bundled from source, or on the traced
 * prebundled file), and no span is exported while replaying. They replay on the untraced bundle
 * too, the one a production worker loads with tracing off; test/integration/tracing.test.ts
 * replays a history recorded by a tracing worker on it (turning tracing off).
 */
Runtime.install({ logger: new DefaultLogger('WARN') });

async function loadFixtures() {
  const fixtures = await loadRecordedHistories();
  return { names: fixtures.map((fixture) => fixture.name), fixtures };
}

/** Each history's replay outcome by fixture name: 'ok' or the error. */
async function replayAll(options: ReplayWorkerOptions, fixtures: Awaited<ReturnType<typeof loadFixtures>>['fixtures']) {
  const results: Record<string, string> = {};
  for await (const result of Worker.runReplayHistories({ ...options, dataConverter: recordedDataConverter() }, fixtures)) {
    const name = fixtures.find((fixture) => fixture.workflowId === result.workflowId)?.name ?? result.workflowId;
    results[name] = result.error ? `${result.error.name}: ${result.error.message}` : 'ok';
  }
  return results;
}

describe('recorded histories replay on a tracing worker', () => {
  it('every recorded history replays with the OpenTelemetry workflow interceptors, exporting nothing', async () => {
    const { names, fixtures } = await loadFixtures();
    expect(names.length).toBeGreaterThanOrEqual(6);
    const exported = new InMemorySpanExporter();
    const results = await replayAll(
      {
        workflowsPath: WORKFLOWS_PATH,
        bundlerOptions: { preloadModules: PRELOADED_WORKFLOW_MODULES },
        interceptors: { workflowModules: [OTEL_WORKFLOW_INTERCEPTORS] },
        sinks: { exporter: makeWorkflowExporter(new SimpleSpanProcessor(exported), new Resource({ 'service.name': 'replay' })) },
      },
      fixtures,
    );
    expect(results).toEqual(Object.fromEntries(names.map((name) => [name, 'ok'])));
    expect(exported.getFinishedSpans()).toEqual([]);
  }, 180_000);

  it('every recorded history replays on the untraced prebundled file (dist/workflow-bundle.js: a production worker with tracing off), which carries no OpenTelemetry', async () => {
    const { names, fixtures } = await loadFixtures();
    const codePath = inject('untracedWorkflowBundlePath');
    expect(await readFile(codePath, 'utf8')).not.toContain('@opentelemetry');
    const results = await replayAll({ workflowBundle: { codePath }, sinks: workflowSpanSinks(null) }, fixtures);
    expect(results).toEqual(Object.fromEntries(names.map((name) => [name, 'ok'])));
  }, 180_000);

  it('every recorded history replays on the traced prebundled file (dist/workflow-bundle.traced.js), with the sinks a prebundled worker registers', async () => {
    const { names, fixtures } = await loadFixtures();
    const exported = new InMemorySpanExporter();
    const resource = new Resource({ 'service.name': 'replay' });
    // The bundle the run's global setup made with bundleWorkflows: the traced production file.
    const bundle = { codePath: inject('workflowBundlePath') };
    // The bundle's interceptor list names the OpenTelemetry module (what makes a prebundled worker trace the workflow).
    expect(await readFile(bundle.codePath, 'utf8')).toMatch(/function importInterceptors\(\) \{[^}]*otel-interceptors\.ts/);
    const traced = await replayAll({ workflowBundle: bundle, sinks: { exporter: makeWorkflowExporter(new SimpleSpanProcessor(exported), resource) } }, fixtures);
    const untraced = await replayAll({ workflowBundle: bundle, sinks: workflowSpanSinks(null) }, fixtures);
    const allOk = Object.fromEntries(names.map((name) => [name, 'ok']));
    expect({ traced, untraced }).toEqual({ traced: allOk, untraced: allOk });
    expect(exported.getFinishedSpans()).toEqual([]);
  }, 180_000);
});
