// NATS connections: the services' connection that reconnects forever, and the one-shot probe
// the stack uses to see whether a JetStream broker is already running.
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

export interface NatsConnectOptions {
  url: string;
  /** Shown in the server's connection list, so operators can tell the dispatcher from consumers. */
  name: string;
  /**
   * Keep trying until the broker is first reachable instead of failing at once. A long-running
   * service wants this; a probe does not.
   */
  waitOnFirstConnect?: boolean;
}

/**
 * Connects with reconnection forever: a broker outage must make the services wait, not exit.
 * Publishes made while disconnected fail on their ack timeout and are retried from the outbox.
 */
export function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  return connect({
    servers: options.url.split(','),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    waitOnFirstConnect: options.waitOnFirstConnect ?? false,
  });
}

/**
 * Whether a JetStream-enabled broker answers at `url` right now: one attempt, no reconnects.
 * The stack asks this before deciding to start a broker of its own.
 */
export async function jetStreamAvailable(url: string, timeoutMs = 2_000): Promise<boolean> {
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: url.split(','), name: 'jetstream-probe', maxReconnectAttempts: 0, reconnect: false, timeout: timeoutMs });
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
