import type { AddressInfo } from 'node:net';
import type { CounterSnapshot } from './counters.js';
import { EmulatorCore, type EventFilter, type StateDump } from './emulator.js';
import type { EmulatedEvent } from './events.js';
import type { FaultRule, FaultRuleInput } from './faults.js';
import { DEFAULT_RETENTION_MS } from './idempotency.js';
import type { RequestLogger } from './request-log.js';
import { buildServer } from './server.js';

export type { CounterSnapshot } from './counters.js';
export type { AccountDump, EventFilter, StateDump } from './emulator.js';
export type { EmulatedEvent, EmulatedEventType } from './events.js';
export type { FaultRule, FaultRuleInput } from './faults.js';
export type { RequestLogger, RequestLogLine } from './request-log.js';
export { CONTROL_PREFIX } from './control-api.js';
export { DEFAULT_RETENTION_MS } from './idempotency.js';

export interface StripeEmulatorOptions {
  /** 0 (the default) picks a free port; read it back from `url` or `port`. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** How long an idempotency key is remembered, on the emulator's clock. Default 24 hours. */
  retentionMs?: number;
  /** Receives one line per request (a pino logger fits). Omitted or false: silent. */
  logger?: RequestLogger | false;
}

export interface StripeEmulator {
  /** Base URL to hand to the SDK as STRIPE_API_BASE, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
  addFault(rule: FaultRuleInput): FaultRule;
  listFaults(): FaultRule[];
  removeFault(id: string): boolean;
  clearFaults(): void;
  /** Moves the emulator's clock forward; returns the new time in ms since the epoch. */
  advanceClock(ms: number): number;
  now(): number;
  counters(): CounterSnapshot;
  events(filter?: EventFilter): EmulatedEvent[];
  state(): StateDump;
  /** Forgets every object, key, event, counter and fault rule, and resets the clock. */
  reset(): void;
}

export async function startStripeEmulator(options: StripeEmulatorOptions = {}): Promise<StripeEmulator> {
  const core = new EmulatorCore(options.retentionMs ?? DEFAULT_RETENTION_MS);
  const app = buildServer(core, options.logger === undefined || options.logger === false ? null : options.logger);
  const host = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}`,
    host: address.address,
    port: address.port,
    close: () => app.close(),
    addFault: (rule) => core.faults.add(rule),
    listFaults: () => core.faults.list(),
    removeFault: (id) => core.faults.remove(id),
    clearFaults: () => {
      core.faults.clear();
    },
    advanceClock: (ms) => core.clock.advance(ms),
    now: () => core.clock.nowMs(),
    counters: () => core.counters.snapshot(),
    events: (filter) => core.events(filter),
    state: () => core.dump(),
    reset: () => {
      core.reset();
    },
  };
}
