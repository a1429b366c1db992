// Test support for dispatcher tests: orders with order.paid outbox rows written directly, and a
// reading of each row's sent state.
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { recordOrder } from '../../src/orders/orders.js';
import { announceOrderPaid } from '../../src/messaging/outbox/order-events.js';

/**
 * Records `count` orders, each with an `order.paid` outbox row written the way the charge
 * writes it; returns the rows' IDs in order. For dispatcher tests that need events, not sagas.
 */
export async function paidOrdersInOutbox(db: Pool, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const orderId = `O-${randomUUID().slice(0, 13)}`;
    await recordOrder(
      db,
      { orderId, tenantId: 'default', customerId: 'cust-1', amount: 1000 + index, currency: 'usd', paymentMethod: 'pm_card_visa', sku: 'sku-1', quantity: 1 },
      `order-payment-${orderId}`,
    );
    await withTransaction(db, (client) =>
      announceOrderPaid(client, orderId, { amountMinor: 1000 + index, currency: 'usd', paymentIntentId: `pi_${orderId}` }),
    );
    const { rows } = await db.query<{ id: number }>(`select id from outbox where order_id = $1 and event_type = 'order.paid'`, [orderId]);
    const row = rows[0];
    if (!row) throw new Error(`no outbox row for ${orderId}`);
    ids.push(row.id);
  }
  return ids;
}

export interface OutboxState {
  id: number;
  sent: boolean;
  attempts: number;
  lastError: string | null;
}

export async function outboxState(db: Pool): Promise<OutboxState[]> {
  const { rows } = await db.query<{ id: number; sent: boolean; attempts: number; last_error: string | null }>(
    'select id, sent_at is not null as sent, attempts, last_error from outbox order by id',
  );
  return rows.map((row) => ({ id: row.id, sent: row.sent, attempts: row.attempts, lastError: row.last_error }));
}
