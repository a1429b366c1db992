// Test support: the recorded saga histories under test/fixtures/histories (one per path the saga
// can take, written by `npm run record-histories`), read as the replay tests need them.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { historyFromJson, type History } from '../../src/platform/temporal/history-json.js';

export const HISTORY_FIXTURES = fileURLToPath(new URL('../fixtures/histories', import.meta.url));

export type EventJson = Record<string, unknown> & { eventType: string };

export interface RecordedHistory {
  name: string;
  workflowId: string;
  history: History;
}

export function decodePayload(payload: { data?: string } | undefined): unknown {
  return JSON.parse(Buffer.from(payload?.data ?? '', 'base64').toString('utf8'));
}

/** The recorded paths, by file name without `.json`. */
export async function recordedHistoryNames(): Promise<string[]> {
  return (await readdir(HISTORY_FIXTURES))
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.replace(/\.json$/, ''))
    .sort();
}

export async function readHistoryJson(name: string): Promise<{ events: EventJson[] }> {
  return JSON.parse(await readFile(path.join(HISTORY_FIXTURES, `${name}.json`), 'utf8')) as { events: EventJson[] };
}

/** Histories carry no workflow ID; the saga's is derived from the order in its input. */
export function workflowIdOf(json: { events: EventJson[] }): string {
  const started = json.events[0]?.workflowExecutionStartedEventAttributes as { input: { payloads: { data: string }[] } };
  const order = decodePayload(started.input.payloads[0]) as { orderId: string };
  return workflowIdForOrder(order.orderId);
}

export async function loadRecordedHistory(name: string): Promise<RecordedHistory> {
  const json = await readHistoryJson(name);
  return { name, workflowId: workflowIdOf(json), history: historyFromJson(json) };
}

export async function loadRecordedHistories(): Promise<RecordedHistory[]> {
  return Promise.all((await recordedHistoryNames()).map(loadRecordedHistory));
}
