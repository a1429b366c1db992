// The demo's message-side check: for each order, whether its outbox events were published and
// applied as receipts and its Stripe webhooks recorded, with a wait and a table.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';

/** What the message side did for one order: its outbox events, and the webhooks received about it. */
export interface OrderMessageFlow {
  orderId: string;
  /** The order's outbox events by type, in the order they were written. */
  events: string[];
  /** Outbox rows the dispatcher has published (marked sent after the broker's ack). */
  published: number;
  /** Outbox rows the receipts consumer has applied (a receipt carries the row ID as its message ID). */
  applied: number;
  /** Verified Stripe webhook events the API recorded for the order. */
  webhooks: number;
}

const flowQuery = `
  select o.order_id,
         array_agg(o.event_type order by o.id) as events,
         count(*) filter (where o.sent_at is not null)::int as published,
         count(*) filter (where exists (select 1 from receipts r where r.message_id = o.id::text))::int as applied
    from outbox o
   where o.order_id = any($1)
   group by o.order_id`;

const webhooksQuery = `
  select order_id, count(*)::int as webhooks
    from stripe_webhook_events
   where order_id = any($1)
   group by order_id`;

export async function readMessageFlow(db: Pool, orderIds: string[]): Promise<OrderMessageFlow[]> {
  const [flows, webhooks] = await Promise.all([
    db.query<{ order_id: string; events: string[]; published: number; applied: number }>(flowQuery, [orderIds]),
    db.query<{ order_id: string; webhooks: number }>(webhooksQuery, [orderIds]),
  ]);
  const flowByOrder = new Map(flows.rows.map((row) => [row.order_id, row]));
  const webhooksByOrder = new Map(webhooks.rows.map((row) => [row.order_id, row.webhooks]));
  return orderIds.map((orderId) => {
    const flow = flowByOrder.get(orderId);
    return {
      orderId,
      events: flow?.events ?? [],
      published: flow?.published ?? 0,
      applied: flow?.applied ?? 0,
      webhooks: webhooksByOrder.get(orderId) ?? 0,
    };
  });
}

/** What is still missing for an order: unpublished or unapplied events, or no webhook where Stripe took money. */
export function messageFlowProblems(flow: OrderMessageFlow, expectsWebhooks: boolean): string[] {
  const problems: string[] = [];
  const total = flow.events.length;
  if (flow.published < total) problems.push(`${total - flow.published} of ${total} outbox event(s) not published`);
  if (flow.applied < total) problems.push(`${total - flow.applied} of ${total} event(s) not applied by the receipts consumer`);
  if (expectsWebhooks && flow.webhooks === 0) problems.push('no Stripe webhook event received');
  return problems;
}

/**
 * Polls until every order's outbox events are published and applied and the webhooks have
 * arrived, or until `boundMs` has passed; returns the last reading either way.
 */
export async function waitForMessageFlow(
  db: Pool,
  orderIds: string[],
  expectsWebhooks: (orderId: string) => boolean,
  boundMs: number,
): Promise<OrderMessageFlow[]> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const flows = await readMessageFlow(db, orderIds);
    const settled = flows.every((flow) => messageFlowProblems(flow, expectsWebhooks(flow.orderId)).length === 0);
    if (settled || Date.now() >= deadline) return flows;
    await sleep(250);
  }
}

/** The message-side table: one row per order. */
export function formatMessageFlowTable(rows: { label: string; flow: OrderMessageFlow; problems: string[] }[]): string {
  const table = [
    ['', 'order', 'outbox events', 'published', 'applied', 'webhooks'],
    ...rows.map(({ label, flow, problems }) => [
      problems.length === 0 ? 'ok' : 'NO',
      `${flow.orderId} (${label})`,
      flow.events.length === 0 ? '-' : flow.events.join(', '),
      `${flow.published}/${flow.events.length}`,
      `${flow.applied}/${flow.events.length}`,
      String(flow.webhooks),
    ]),
  ];
  const widths = table[0]?.map((_, column) => Math.max(...table.map((cells) => cells[column]?.length ?? 0))) ?? [];
  return table.map((cells) => `  ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()}`).join('\n');
}
