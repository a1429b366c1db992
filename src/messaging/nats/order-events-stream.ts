// Creates the JetStream stream the order events are published to, or brings an existing one's
// subjects and duplicate window to ours; safe for every dispatcher and consumer to call at start.
import { JetStreamApiError, jetstreamManager, type JetStreamManager, type StreamInfo } from '@nats-io/jetstream';
import { millis, nanos, type NatsConnection } from '@nats-io/transport-node';

export interface OrderEventsStream {
  /** Stream name, e.g. ORDERS. */
  stream: string;
  /** The stream holds `<prefix>.>`. */
  subjectPrefix: string;
  /** How long JetStream drops a republished Nats-Msg-Id. */
  duplicateWindowMs: number;
}

// JetStream's "stream name already in use with a different configuration".
const STREAM_NAME_IN_USE = 10058;

/**
 * Creates the stream if it does not exist, and brings its subjects and duplicate window to
 * ours if it does: every dispatcher and consumer calls this at start, in any order, any number
 * of times. Everything else about an existing stream (limits, replicas) is left as its operator set it.
 */
export async function ensureOrderEventsStream(nc: NatsConnection, config: OrderEventsStream): Promise<StreamInfo> {
  const jsm = await jetstreamManager(nc);
  const wanted = { subjects: [`${config.subjectPrefix}.>`], duplicate_window: nanos(config.duplicateWindowMs) };
  try {
    return await jsm.streams.add({ name: config.stream, ...wanted });
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE)) throw error;
  }
  return updateIfDifferent(jsm, config.stream, wanted);
}

async function updateIfDifferent(
  jsm: JetStreamManager,
  stream: string,
  wanted: { subjects: string[]; duplicate_window: number },
): Promise<StreamInfo> {
  const info = await jsm.streams.info(stream);
  const sameSubjects = info.config.subjects.length === 1 && info.config.subjects[0] === wanted.subjects[0];
  const sameWindow = millis(info.config.duplicate_window) === millis(wanted.duplicate_window);
  if (sameSubjects && sameWindow) return info;
  return jsm.streams.update(stream, wanted);
}
