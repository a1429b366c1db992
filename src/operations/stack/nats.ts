// The stack's JetStream broker, found or started, and the stream names it uses: plain on a broker
// of its own (started with credentials for each service), names of its data directory's own on a
// shared one.
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensureNatsUserKeys, ordersBrokerConfig, seedFileAuthenticator, type NatsUserKeys } from '../../messaging/nats/nats-credentials.js';
import { findNats, type FindNatsOptions, type NatsBroker } from '../../platform/tools/nats.js';
import { ensurePrivateDir, writePrivateFile } from '../../platform/tools/private-files.js';

export interface NatsOptions extends Omit<FindNatsOptions, 'configure'> {
  /** Keeps the name of the stack's stream on a broker it shares (see `sharedStreamNames`). */
  streamIdFile: string;
  /** Where a broker of its own keeps its configuration and the services' nkey seeds (0700, files 0600). */
  credentialsDir: string;
  /** The database whose outbox publishes here: another database (say, local, then embedded) gets another stream. */
  databaseUrl: string;
}

export interface StackNats extends NatsBroker {
  /** The JetStream stream and subject prefix the stack's outbox uses on this broker. */
  stream: string;
  subjectPrefix: string;
  /** Each service's nkey seed file on a broker of the stack's own; null on one it found (no credentials). */
  seedFiles: { outboxDispatcher: string; receipts: string } | null;
}

/** The stack's own broker's names: the defaults of src/messaging/nats/nats-settings.ts and src/receipts.ts. */
const OWN = { stream: 'ORDERS', subjectPrefix: 'orders', durable: 'receipts' } as const;

/**
 * A JetStream broker for the outbox, as `findNats` finds or starts it. On a broker of its own the
 * stack's outbox uses the plain names; on one it shares, names of its data directory's own.
 */
export async function startNats(options: NatsOptions): Promise<StackNats> {
  // Set only when findNats starts a server of the stack's own (and so calls configure).
  const own: { keys: NatsUserKeys | null } = { keys: null };
  const broker = await findNats({
    ...options,
    async configure(listen) {
      await ensurePrivateDir(options.credentialsDir, "the NATS server's configuration and keys");
      const keys = await ensureNatsUserKeys(options.credentialsDir);
      own.keys = keys;
      const configFile = path.join(options.credentialsDir, 'nats-server.conf');
      await writePrivateFile(configFile, ordersBrokerConfig({ ...listen, ...OWN, keys }));
      return { configFile, probe: await seedFileAuthenticator(keys['outbox-dispatcher'].seedFile) };
    },
  });
  if (broker.kind === 'started' && own.keys !== null) {
    const { 'outbox-dispatcher': dispatcher, receipts } = own.keys;
    return { ...broker, stream: OWN.stream, subjectPrefix: OWN.subjectPrefix, seedFiles: { outboxDispatcher: dispatcher.seedFile, receipts: receipts.seedFile } };
  }
  return { ...broker, ...(await sharedStreamNames(options.streamIdFile, options.databaseUrl)), seedFiles: null };
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
  if (!/^[a-z0-9]{8,32}$/.test(id) || (forDatabase !== undefined && forDatabase !== database)) id = randomBytes(6).toString('hex');
  await writePrivateFile(idFile, `${id} ${database}\n`);
  return { stream: `ORDERS_STACK_${id}`, subjectPrefix: `orders_stack_${id}` };
}
