// Test support: the recorded saga histories under test/fixtures/histories (one per path the saga
// can take, written by `npm run record-histories`), read as the replay tests need them. Their
// payloads are encrypted with the committed TEST-ONLY key, which the replayer is given too.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { workflowIdForOrder } from '../../src/domain/order-input.js';
import { historyFromJson, type History } from '../../src/platform/temporal/history-json.js';
import { defaultPayloadConverter, type DataConverter, type Payload } from '@temporalio/common';
import { dataConverterFor, encryptionCodecFor } from '../../src/platform/temporal/payload-encryption/data-converter.js';
import { testOnlyEncryption } from './payload-keys.js';

export const HISTORY_FIXTURES = fileURLToPath(new URL('../fixtures/histories', import.meta.url));

export type EventJson = Record<string, unknown> & { eventType: string };

export interface RecordedHistory {
  name: string;
  workflowId: string;
  history: History;
}

/** The data converter the fixtures were recorded with: for Worker.runReplayHistories and runReplayHistory. */
export const recordedDataConverter = (): DataConverter => dataConverterFor(testOnlyEncryption());

type PayloadJson = { metadata?: Record<string, string>; data?: string } | undefined;

/** A payload of a fixture as stored (base64 JSON), decrypted with the TEST-ONLY key and converted. */
export async function decodePayload(payload: PayloadJson): Promise<unknown> {
  const stored: Payload = {
    metadata: Object.fromEntries(Object.entries(payload?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
    data: Buffer.from(payload?.data ?? '', 'base64'),
  };
  const [plain] = await encryptionCodecFor(testOnlyEncryption()).decode([stored]);
  return defaultPayloadConverter.fromPayload(plain as Payload);
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
export async function workflowIdOf(json: { events: EventJson[] }): Promise<string> {
  const started = json.events[0]?.workflowExecutionStartedEventAttributes as { input: { payloads: PayloadJson[] } };
  const order = (await decodePayload(started.input.payloads[0])) as { orderId: string };
  return workflowIdForOrder(order.orderId);
}

export async function loadRecordedHistory(name: string): Promise<RecordedHistory> {
  const json = await readHistoryJson(name);
  return { name, workflowId: await workflowIdOf(json), history: historyFromJson(json) };
}

export async function loadRecordedHistories(): Promise<RecordedHistory[]> {
  return Promise.all((await recordedHistoryNames()).map(loadRecordedHistory));
}
