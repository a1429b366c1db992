// NATS connections: the services' connection that reconnects forever, and the one-shot probe
// the stack uses to see whether a JetStream broker is already running.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type Authenticator, type NatsConnection } from '@nats-io/transport-node';
import { seedFileAuthenticator } from './nats-credentials.js';

export interface NatsConnectOptions {
  url: string;
  /** Shown in the server's connection list, so operators can tell the dispatcher from consumers. */
  name: string;
  /**
   * Keep trying until the broker is first reachable instead of failing at once. A long-running
   * service wants this; a probe does not.
   */
  waitOnFirstConnect?: boolean;
  /** The service's nkey seed file (NATS_NKEY_SEED_FILE); null or absent = no credentials. */
  seedFile?: string | null;
  /** The broker's CA for tls:// (NATS_TLS_CA_FILE). */
  tlsCaFile?: string | null;
}

/**
 * Connects with reconnection forever: a broker outage must make the services wait, not exit.
 * Publishes made while disconnected fail on their ack timeout and are retried from the outbox.
 */
export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  const authenticator = options.seedFile ? await seedFileAuthenticator(options.seedFile) : undefined;
  return connect({
    servers: options.url.split(','),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
    ...(authenticator && { authenticator }),
    ...(options.tlsCaFile && { tls: { caFile: options.tlsCaFile } }),
  });
}

/**
 * Whether a JetStream-enabled broker answers at `url` right now: one attempt, no reconnects.
 * The stack asks this before deciding to start a broker of its own.
 */
export async function jetStreamAvailable(url: string, timeoutMs = 2_000, authenticator?: Authenticator): Promise<boolean> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: url.split(','),
      name: 'jetstream-probe',
      maxReconnectAttempts: 0,
      reconnect: false,
      timeout: timeoutMs,
      ...(authenticator && { authenticator }),
    });
  } catch {
    return false;
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
    await jsm.getAccountInfo();
    return true;
  } catch {
    return false;
  } finally {
    await nc.close();
  }
}
