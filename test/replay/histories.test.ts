// Failure-matrix row 13: every recorded history replays against the current workflow code
// without nondeterminism, and a reordered history is caught.
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { historyFromJson } from '../../src/platform/temporal/history-json.js';
import { workflowSpanSinks } from '../../src/platform/temporal/order-worker.js';
import { decodePayload, loadRecordedHistories, readHistoryJson, recordedDataConverter, recordedHistoryNames, workflowIdOf } from '../support/recorded-histories.js';

/**
 * Each path the saga can take, and how its recorded run ended. The histories are regenerated with
 * `npm run record-histories` (scripts/record-histories.ts) whenever the saga's commands change,
 * which ships as a new worker build (docs/deploying.md): runs in flight finish on the build that
 * started them, so the current code replays only what it records itself.
 */
const PATHS = {
  'authorized-after-webhook': 'completed',
  'cancelled-after-capture': 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
  'cancelled-before-capture': 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
  completed: 'completed',
  declined: 'declined',
  'out-of-stock': 'compensated',
} as const;
const PATH_NAMES = Object.keys(PATHS);

// Replay workers log their lifecycle at INFO; a failing replay's error is what matters here.
Runtime.install({ logger: new DefaultLogger('WARN') });

function replayOptions(): ReplayWorkerOptions {
  // The same bundle every test worker runs, built from the current workflow source; it carries
  // the OpenTelemetry workflow interceptors, so it gets the sink a prebundled worker registers.
  // It reads the payloads with the TEST-ONLY key they were recorded under.
  return { workflowBundle: { codePath: inject('workflowBundlePath') }, sinks: workflowSpanSinks(null), dataConverter: recordedDataConverter() };
}

describe('failure matrix row 13: recorded histories replay without nondeterminism', () => {
  it('row 13: the fixtures cover each path of the saga, each ending as its name says', async () => {
    const files = await recordedHistoryNames();
    expect(files).toEqual([...PATH_NAMES].sort());

    const ends: Record<string, unknown> = {};
    for (const name of files) {
      const last = (await readHistoryJson(name)).events.at(-1);
      if (last?.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED') {
        const attributes = last.workflowExecutionCompletedEventAttributes as { result: { payloads: { data: string }[] } };
        ends[name] = ((await decodePayload(attributes.result.payloads[0])) as { status: string }).status;
      } else {
        ends[name] = last?.eventType;
      }
    }
    expect(ends).toEqual(PATHS);
  });

  it('row 13: no recorded history carries a patch marker: saga changes ship as new worker builds, not patch branches', async () => {
    const markers: Record<string, string[]> = {};
    for (const name of PATH_NAMES) {
      markers[name] = (await readHistoryJson(name)).events.flatMap((event) => {
        const marker = event.markerRecordedEventAttributes as { markerName?: string } | undefined;
        return marker?.markerName === 'core_patch' ? [marker.markerName] : [];
      });
    }
    expect(markers).toEqual(Object.fromEntries(PATH_NAMES.map((name) => [name, []])));
  });

  it('row 13: every recorded history replays against the current workflow code with Worker.runReplayHistories', async () => {
    const fixtures = await loadRecordedHistories();
    const results: Record<string, string> = {};
    for await (const result of Worker.runReplayHistories(replayOptions(), fixtures)) {
      const name = fixtures.find((fixture) => fixture.workflowId === result.workflowId)?.name ?? result.workflowId;
      results[name] = result.error ? `${result.error.name}: ${result.error.message}` : 'ok';
    }
    expect(results).toEqual(Object.fromEntries(PATH_NAMES.map((name) => [name, 'ok'])));
  });

  it('row 13: a workflow change that reorders activities is caught as a DeterminismViolationError (tampered history as the stand-in)', async () => {
    // Swapping the first two scheduled activities in the history is what replay sees when the
    // code swaps those two calls: the same check that fails CI on such a change.
    const json = await readHistoryJson('completed');
    const scheduled = json.events.filter((event) => event.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED');
    const [first, second] = scheduled.map((event) => event.activityTaskScheduledEventAttributes as Record<string, unknown>);
    if (!first || !second) throw new Error('completed.json has fewer than two scheduled activities');
    for (const field of ['activityId', 'activityType'] as const) [first[field], second[field]] = [second[field], first[field]];

    const replay = Worker.runReplayHistory(replayOptions(), historyFromJson(json), await workflowIdOf(json));

    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
