import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { findNats, type FindNatsOptions, type NatsBroker } from '../tools/nats.js';

export interface NatsOptions extends FindNatsOptions {
  /** Keeps the name of the stack's stream on a broker it shares (see `sharedStreamNames`). */
  streamIdFile: string;
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
  return { ...broker, ...(await sharedStreamNames(options.streamIdFile)) };
}

/**
 * A stream of this data directory's own on a broker others use too. Its outbox row IDs travel as
 * Nats-Msg-Id, and a fresh database numbers its rows from 1 again: in a shared stream, JetStream
 * would drop them as duplicates of another database's rows inside its duplicate window, and they
 * would never reach the receipts consumer. The name lives as long as the data directory, so a
 * restarted stack keeps its stream and its durable consumer's position.
 */
async function sharedStreamNames(idFile: string): Promise<{ stream: string; subjectPrefix: string }> {
  let id: string;
  try {
    id = (await readFile(idFile, 'utf8')).trim();
  } catch {
    id = '';
  }
  if (!/^[a-z0-9]{8,32}$/.test(id)) {
    id = randomBytes(6).toString('hex');
    await mkdir(path.dirname(idFile), { recursive: true });
    await writeFile(idFile, `${id}\n`);
  }
  return { stream: `ORDERS_STACK_${id}`, subjectPrefix: `orders_stack_${id}` };
}
