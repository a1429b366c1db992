// Failure-matrix row 13: every recorded history of both saga shapes replays against the current
// workflow code without nondeterminism, and a reordered history is caught.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { historyFromJson, type History } from '../../src/platform/temporal/history-json.js';
import { workflowSpanSinks } from '../../src/platform/temporal/order-worker.js';
import { HOLD_THEN_CAPTURE_PATCH } from '../../src/workflows/patches.js';

/**
 * Two shapes, each with its recorded paths. The hold-then-capture histories are regenerated with
 * `npm run record-histories` (scripts/record-histories.ts). The charge-first ones were recorded
 * before that change and never again: they stand for executions still open on the old shape,
 * which the current code must finish on that shape (the `hold-then-capture` patch).
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/histories', import.meta.url));
const SHAPES = {
  'hold-then-capture': {
    'authorized-after-webhook': 'completed',
    'cancelled-after-capture': 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
    'cancelled-before-capture': 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
    completed: 'completed',
    declined: 'declined',
    'out-of-stock': 'compensated',
  },
  'charge-first': {
    cancelled: 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
    compensated: 'compensated',
    completed: 'completed',
    declined: 'declined',
  },
} as const;
type Shape = keyof typeof SHAPES;
const SHAPE_NAMES = Object.keys(SHAPES) as Shape[];
const PATHS = SHAPE_NAMES.flatMap((shape) => Object.keys(SHAPES[shape]).map((name) => `${shape}/${name}`));

// Replay workers log their lifecycle at INFO; a failing replay's error is what matters here.
Runtime.install({ logger: new DefaultLogger('WARN') });

interface Fixture {
  name: string;
  workflowId: string;
  history: History;
}

type EventJson = Record<string, unknown> & { eventType: string };

function decodePayload(payload: { data?: string } | undefined): unknown {
  return JSON.parse(Buffer.from(payload?.data ?? '', 'base64').toString('utf8'));
}

async function readHistoryJson(name: string): Promise<{ events: EventJson[] }> {
  return JSON.parse(await readFile(path.join(FIXTURES, `${name}.json`), 'utf8')) as { events: EventJson[] };
}

/** Histories carry no workflow ID; the saga's is derived from the order in its input. */
function workflowIdOf(json: { events: EventJson[] }): string {
  const started = json.events[0]?.workflowExecutionStartedEventAttributes as { input: { payloads: { data: string }[] } };
  const order = decodePayload(started.input.payloads[0]) as { orderId: string };
  return workflowIdForOrder(order.orderId);
}

async function loadFixture(name: string): Promise<Fixture> {
  const json = await readHistoryJson(name);
  return { name, workflowId: workflowIdOf(json), history: historyFromJson(json) };
}

function replayOptions(): ReplayWorkerOptions {
  // The same bundle every test worker runs, built from the current workflow source; it carries
  // the OpenTelemetry workflow interceptors, so it gets the sink a prebundled worker registers.
  return { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: workflowSpanSinks(null) };
}

describe('failure matrix row 13: recorded histories replay without nondeterminism', () => {
  it.each(SHAPE_NAMES)('row 13: the %s fixtures cover each path of that shape, each ending as its name says', async (shape) => {
    const files = (await readdir(path.join(FIXTURES, shape))).filter((file) => file.endsWith('.json')).map((file) => file.replace(/\.json$/, ''));
    expect(files.sort()).toEqual(Object.keys(SHAPES[shape]).sort());

    const ends: Record<string, unknown> = {};
    for (const name of files) {
      const last = (await readHistoryJson(`${shape}/${name}`)).events.at(-1);
      if (last?.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED') {
        const attributes = last.workflowExecutionCompletedEventAttributes as { result: { payloads: { data: string }[] } };
        ends[name] = (decodePayload(attributes.result.payloads[0]) as { status: string }).status;
      } else {
        ends[name] = last?.eventType;
      }
    }
    expect(ends).toEqual(SHAPES[shape]);
  });

  it('row 13: only the hold-then-capture histories carry the hold-then-capture patch marker', async () => {
    const patchesOf = (events: EventJson[]) =>
      events.flatMap((event) => {
        const marker = event.markerRecordedEventAttributes as { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> } | undefined;
        if (marker?.markerName !== 'core_patch') return [];
        return (marker.details?.['patch-data']?.payloads ?? []).map((payload) => (decodePayload(payload) as { id: string }).id);
      });
    const patches: Record<string, string[]> = {};
    for (const name of PATHS) patches[name] = patchesOf((await readHistoryJson(name)).events);
    expect(patches).toEqual(Object.fromEntries(PATHS.map((name) => [name, name.startsWith('hold-then-capture/') ? [HOLD_THEN_CAPTURE_PATCH] : []])));
  });

  it('row 13: every recorded history replays against the current workflow code with Worker.runReplayHistories', async () => {
    const fixtures = await Promise.all(PATHS.map(loadFixture));
    const results: Record<string, string> = {};
    for await (const result of Worker.runReplayHistories(replayOptions(), fixtures)) {
      const name = fixtures.find((fixture) => fixture.workflowId === result.workflowId)?.name ?? result.workflowId;
      results[name] = result.error ? `${result.error.name}: ${result.error.message}` : 'ok';
    }
    expect(results).toEqual(Object.fromEntries(PATHS.map((name) => [name, 'ok'])));
  });

  it('row 13: a workflow change that reorders activities is caught as a DeterminismViolationError (tampered history as the stand-in)', async () => {
    // Swapping the first two scheduled activities in the history is what replay sees when the
    // code swaps those two calls: the same check that fails CI on such a change.
    const json = await readHistoryJson('hold-then-capture/completed');
    const scheduled = json.events.filter((event) => event.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED');
    const [first, second] = scheduled.map((event) => event.activityTaskScheduledEventAttributes as Record<string, unknown>);
    if (!first || !second) throw new Error('completed.json has fewer than two scheduled activities');
    for (const field of ['activityId', 'activityType'] as const) [first[field], second[field]] = [second[field], first[field]];

    const replay = Worker.runReplayHistory(replayOptions(), historyFromJson(json), workflowIdOf(json));

    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
