import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { historyFromJson, type History } from '../../src/temporal/history-json.js';

// Regenerate with `npm run record-histories` (scripts/record-histories.ts).
const FIXTURES = fileURLToPath(new URL('../fixtures/histories', import.meta.url));
const PATHS = ['cancelled', 'compensated', 'completed', 'declined'];

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
  // The same bundle every test worker runs, built from the current workflow source.
  return { workflowBundle: { codePath: inject('workflowBundlePath') } };
}

describe('failure matrix row 13: recorded histories replay without nondeterminism', () => {
  it('row 13: the fixtures cover the completed, declined, compensated and cancelled paths, each ending as its name says', async () => {
    const files = (await readdir(FIXTURES)).filter((file) => file.endsWith('.json')).map((file) => file.replace(/\.json$/, ''));
    expect(files.sort()).toEqual(PATHS);

    const ends: Record<string, unknown> = {};
    for (const name of PATHS) {
      const last = (await readHistoryJson(name)).events.at(-1);
      if (last?.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED') {
        const attributes = last.workflowExecutionCompletedEventAttributes as { result: { payloads: { data: string }[] } };
        ends[name] = (decodePayload(attributes.result.payloads[0]) as { status: string }).status;
      } else {
        ends[name] = last?.eventType;
      }
    }
    expect(ends).toEqual({
      cancelled: 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
      compensated: 'compensated',
      completed: 'completed',
      declined: 'declined',
    });
  });

  it('row 13: every recorded history replays against the current workflow code with Worker.runReplayHistories', async () => {
    const fixtures = await Promise.all(PATHS.map(loadFixture));
    const results: Record<string, string> = {};
    for await (const result of Worker.runReplayHistories(replayOptions(), fixtures)) {
      const name = fixtures.find((fixture) => fixture.workflowId === result.workflowId)?.name ?? result.workflowId;
      results[name] = result.error ? `${result.error.name}: ${result.error.message}` : 'ok';
    }
    expect(results).toEqual({ cancelled: 'ok', compensated: 'ok', completed: 'ok', declined: 'ok' });
  });

  it('row 13: a workflow change that reorders activities is caught as a DeterminismViolationError (tampered history as the stand-in)', async () => {
    // Swapping the first two scheduled activities in the history is what replay sees when the
    // code swaps those two calls: the same check that fails CI on such a change.
    const json = await readHistoryJson('completed');
    const scheduled = json.events.filter((event) => event.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED');
    const [first, second] = scheduled.map((event) => event.activityTaskScheduledEventAttributes as Record<string, unknown>);
    if (!first || !second) throw new Error('completed.json has fewer than two scheduled activities');
    for (const field of ['activityId', 'activityType'] as const) [first[field], second[field]] = [second[field], first[field]];

    const replay = Worker.runReplayHistory(replayOptions(), historyFromJson(json), workflowIdOf(json));

    await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
