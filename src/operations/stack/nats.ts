// The stack's JetStream broker, found or started, and the stream names it uses: plain on a broker
// of its own, names of its data directory's own on a shared one.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { findNats, type FindNatsOptions, type NatsBroker } from '../../platform/tools/nats.js';

export interface NatsOptions extends FindNatsOptions {
  /** Keeps the name of the stack's stream on a broker it shares (see `sharedStreamNames`). */
  streamIdFile: string;
  /** The database whose outbox publishes here: another database (say, local, then embedded) gets another stream. */
  databaseUrl: string;
}

export interface StackNats extends NatsBroker {
  /** The JetStream stream and subject prefix the stack's outbox uses on this broker. */
  stream: string;
  subjectPrefix: string;
}

/**
 * A JetStream broker for the outbox, as `findNats` finds or starts it. On a broker of its own the
 * stack's outbox uses the plain names; on one it shares, names of its data directory's own.
 */
export async function startNats(options: NatsOptions): Promise<StackNats> {
  const broker = await findNats(options);
  if (broker.kind === 'started') return { ...broker, stream: 'ORDERS', subjectPrefix: 'orders' };
  return { ...broker, ...(await sharedStreamNames(options.streamIdFile, options.databaseUrl)) };
}

/**
 * A stream of this data directory's own on a broker others use too. Its outbox row IDs travel as
 * Nats-Msg-Id, and a fresh database numbers its rows from 1 again: in a shared stream, JetStream
 * would drop them as duplicates of another database's rows inside its duplicate window, and they
 * would never reach the receipts consumer. The name lives as long as the data directory, so a
 * restarted stack keeps its stream and its durable consumer's position; a stack on another database
 * (local, then embedded) gets a stream of its own.
 */
async function sharedStreamNames(idFile: string, databaseUrl: string): Promise<{ stream: string; subjectPrefix: string }> {
  const database = createHash('sha256').update(databaseUrl).digest('hex').slice(0, 12);
  let id: string;
  let forDatabase: string | undefined;
  try {
    [id = '', forDatabase] = (await readFile(idFile, 'utf8')).trim().split(/\s+/);
  } catch {
    id = '';
  }
  // A file from before the database was recorded (no second word) keeps its stream.
  if (!/^[a-z0-9]{8,32}$/.test(id) || (forDatabase !== undefined && forDatabase !== database)) {
    id = randomBytes(6).toString('hex');
    await mkdir(path.dirname(idFile), { recursive: true });
  }
  await writeFile(idFile, `${id} ${database}\n`);
  return { stream: `ORDERS_STACK_${id}`, subjectPrefix: `orders_stack_${id}` };
}
