import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { historyFromJson } from '../../src/temporal/history-json.js';
import { PRELOADED_WORKFLOW_MODULES, WORKFLOWS_PATH } from '../../src/temporal/order-worker.js';

/**
 * Turning tracing on must not break a run in flight: every recorded history (recorded without the
 * OpenTelemetry workflow interceptors) replays with them, as a tracing worker runs the workflows
 * (src/temporal/order-worker.ts with tracing, bundled from source), and no span is exported while
 * replaying.
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/histories', import.meta.url));
const OTEL_WORKFLOW_INTERCEPTORS = fileURLToPath(new URL('../../src/workflows/otel-interceptors.ts', import.meta.url));

Runtime.install({ logger: new DefaultLogger('WARN') });

describe('recorded histories replay on a tracing worker', () => {
  it('every recorded history replays with the OpenTelemetry workflow interceptors, exporting nothing', async () => {
    const names: string[] = [];
    for (const shape of await readdir(FIXTURES)) {
      for (const file of await readdir(path.join(FIXTURES, shape))) if (file.endsWith('.json')) names.push(`${shape}/${file.replace(/\.json$/, '')}`);
    }
    expect(names.length).toBeGreaterThanOrEqual(10);
    const fixtures = await Promise.all(
      names.map(async (name) => {
        const json = JSON.parse(await readFile(path.join(FIXTURES, `${name}.json`), 'utf8')) as { events: Record<string, unknown>[] };
        const started = json.events[0]?.workflowExecutionStartedEventAttributes as { input: { payloads: { data: string }[] } };
        const order = JSON.parse(Buffer.from(started.input.payloads[0]?.data ?? '', 'base64').toString('utf8')) as { orderId: string };
        return { name, workflowId: workflowIdForOrder(order.orderId), history: historyFromJson(json) };
      }),
    );
    const exported = new InMemorySpanExporter();
    const results: Record<string, string> = {};
    const replays = Worker.runReplayHistories(
      {
        workflowsPath: WORKFLOWS_PATH,
        bundlerOptions: { preloadModules: PRELOADED_WORKFLOW_MODULES },
        interceptors: { workflowModules: [OTEL_WORKFLOW_INTERCEPTORS] },
        sinks: { exporter: makeWorkflowExporter(new SimpleSpanProcessor(exported), new Resource({ 'service.name': 'replay' })) },
      },
      fixtures,
    );
    for await (const result of replays) {
      const name = fixtures.find((fixture) => fixture.workflowId === result.workflowId)?.name ?? result.workflowId;
      results[name] = result.error ? `${result.error.name}: ${result.error.message}` : 'ok';
    }
    expect(results).toEqual(Object.fromEntries(names.map((name) => [name, 'ok'])));
    expect(exported.getFinishedSpans()).toEqual([]);
  }, 180_000);
});
