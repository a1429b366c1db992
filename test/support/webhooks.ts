// Test support for webhook tests: the API on a free port, Stripe events built, signed and
// delivered as Stripe would, and the inbox rows they leave.
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { pino } from 'pino';
import Stripe from 'stripe';
import { buildApiServer } from '../../src/api/server.js';
import { temporalSignaller, type SignalPaymentEvent } from '../../src/messaging/webhooks/workflow-handoff.js';
import { disputeSignaller, fraudWarningStarter } from '../../src/messaging/webhooks/dispute-handoff.js';
import type { DisputeSettings } from '../../src/platform/config/settings.js';

export const WEBHOOK_SECRET = 'whsec_order_payments_test_secret';

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  webhookUrl: string;
  close(): Promise<void>;
}

/** The HTTP service on a free port, over a real database and a real Temporal client. */
export async function startApi(options: {
  db: Pool;
  client?: Client;
  signal?: SignalPaymentEvent;
  handoff?: { attempts?: number; retryMs?: number };
  /** The signing secrets the route accepts. Default [WEBHOOK_SECRET]. */
  secrets?: string[];
  /** Where the API logs; default nowhere. */
  logger?: FastifyBaseLogger;
  /** Dispute webhooks go to their dispute workflows on this task queue, with these settings (read at each hand-off). */
  disputes?: { taskQueue: string; settings: DisputeSettings };
}): Promise<RunningApi> {
  const signal = options.signal ?? (options.client ? temporalSignaller(options.client) : undefined);
  if (!signal) throw new Error('startApi needs a Temporal client or a signaller');
  const app = await buildApiServer({
    db: options.db,
    signalPaymentEvent: signal,
    ...(options.disputes && options.client && { signalDispute: disputeSignaller(options.client, options.disputes) }),
    ...(options.disputes && options.client && { startFraudWarning: fraudWarningStarter(options.client, { taskQueue: options.disputes.taskQueue, policy: 'refund' }) }),
    stripeWebhook: { secrets: options.secrets ?? [WEBHOOK_SECRET], toleranceSeconds: 300 },
    logger: options.logger ?? pino({ level: 'silent' }),
    handoff: options.handoff ?? { attempts: 3, retryMs: 20 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return { app, url, webhookUrl: `${url}/webhooks/stripe`, close: () => app.close() };
}

let sequence = 0;

/** A Stripe Event as Stripe sends it, about a PaymentIntent, a Charge or a Refund of an order. */
export function stripeEvent(
  type: string,
  object: Record<string, unknown> & { id: string; object: string },
  options: { created?: number; id?: string } = {},
): Record<string, unknown> {
  sequence += 1;
  return {
    id: options.id ?? `evt_test_${Date.now()}_${sequence}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: options.created ?? Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

export interface Delivery {
  status: number;
  body: Record<string, unknown>;
}

/** POSTs a payload with the given signature header (or none), as Stripe would. */
export async function deliver(url: string, payload: string, signature: string | null): Promise<Delivery> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...(signature !== null && { 'stripe-signature': signature }) },
    body: payload,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Signs with the SDK's own test helper, so the receiver is checked against Stripe's scheme, not ours. */
export function sign(payload: string, options: { secret?: string; timestamp?: number } = {}): string {
  return Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? WEBHOOK_SECRET,
    ...(options.timestamp !== undefined && { timestamp: options.timestamp }),
  });
}

/** Signs and delivers one event. */
export function deliverSigned(url: string, event: Record<string, unknown>): Promise<Delivery> {
  const payload = JSON.stringify(event, null, 2);
  return deliver(url, payload, sign(payload));
}

export interface InboxRows {
  inbox: number;
  events: { event_id: string; event_type: string; applied: boolean; handed_off_at: Date | null; handoff_error: string | null }[];
}

/** What the inbox, the receipts and the effects hold for these event IDs. */
export async function inboxFor(db: Pool, eventIds: string[]): Promise<InboxRows> {
  const inbox = await db.query<{ count: number }>(
    `select count(*)::int as count from processed_messages where subscriber_id = 'stripe-webhooks' and message_id = any($1)`,
    [eventIds],
  );
  const events = await db.query<InboxRows['events'][number]>(
    `select event_id, event_type, applied, handed_off_at, handoff_error from stripe_webhook_events where event_id = any($1) order by received_at, event_id`,
    [eventIds],
  );
  return { inbox: inbox.rows[0]?.count ?? 0, events: events.rows };
}

export async function objectState(db: Pool, objectId: string) {
  const { rows } = await db.query<{ status: string; status_rank: number; event_id: string; amount_refunded: number | null; order_id: string | null }>(
    'select status, status_rank, event_id, amount_refunded, order_id from stripe_object_states where object_id = $1',
    [objectId],
  );
  return rows[0];
}

/** A stripe_webhook_events row (alias `e`) read as StoredEventFields. */
export const STORED_EVENT_COLUMNS = `e.event_id as "eventId", e.event_type as "eventType", e.event_created as "eventCreated",
  e.object_id as "objectId", e.object_type as "objectType", e.object_status as "objectStatus",
  e.payment_intent_id as "paymentIntentId", e.order_id as "orderId", e.amount, e.amount_refunded as "amountRefunded",
  e.refunded, e.currency`;
