// Records a verified Stripe webhook event: inbox row, stored event and the order-aware update of
// the object's state in one transaction; also marks hand-offs and reaps old events.
import type { Pool, PoolClient } from 'pg';
import { deleteInBatches } from '../../platform/db/batches.js';
import type { Queryable } from '../../platform/db/queryable.js';
import { withTransaction } from '../../platform/db/transaction.js';
import type { PaymentEvent } from '../../domain/payment-event.js';
import { projectEvent, SETTLED_STATUSES, storedEventFields, type ObjectState, type StripeEvent } from './stripe-event.js';

/** The inbox subscriber that Stripe's webhooks are deduplicated under. */
export const STRIPE_WEBHOOK_SUBSCRIBER = 'stripe-webhooks';

export type RecordedEvent =
  /** Already received: acknowledged, nothing written. */
  | { duplicate: true }
  | {
      duplicate: false;
      /** False when a newer event had already said more: recorded, not applied. */
      applied: boolean;
      /** What to hand to the order's workflow, when the event changed an order's payment state. */
      handoff: { orderId: string; event: PaymentEvent } | null;
    };

/**
 * The inbox rule for Stripe's webhooks: the event's inbox row, its receipt and its effect commit
 * in one transaction, so a redelivery (or a concurrent duplicate, which waits on the inbox row's
 * primary key) finds the inbox row and writes nothing. The effect is order-aware: a state is
 * replaced only by an event further along, or as far along and newer.
 */
export async function recordStripeEvent(db: Pool, event: StripeEvent): Promise<RecordedEvent> {
  return withTransaction(db, async (client) => {
    const inbox = await client.query(
      `insert into processed_messages (subscriber_id, message_id) values ($1, $2) on conflict do nothing`,
      [STRIPE_WEBHOOK_SUBSCRIBER, event.id],
    );
    if (inbox.rowCount !== 1) return { duplicate: true };

    const state = projectEvent(event);
    // The fields this project reads, never the event itself (migration 018: no card data kept).
    const kept = storedEventFields(event);
    await client.query(
      `insert into stripe_webhook_events (event_id, event_type, object_id, payment_intent_id, order_id, event_created, applied,
                                          object_type, object_status, amount, amount_refunded, refunded, currency)
       values ($1, $2, $3, $4, $5, $6, false, $7, $8, $9, $10, $11, $12)`,
      [
        kept.eventId,
        kept.eventType,
        kept.objectId,
        kept.paymentIntentId,
        kept.orderId,
        kept.eventCreated,
        kept.objectType,
        kept.objectStatus,
        kept.amount,
        kept.amountRefunded,
        kept.refunded,
        kept.currency,
      ],
    );
    const applied = state !== null && (await applyState(client, state, event));
    if (applied) await client.query('update stripe_webhook_events set applied = true where event_id = $1', [event.id]);

    const handoff =
      applied && state.orderId !== null
        ? {
            orderId: state.orderId,
            event: {
              eventId: event.id,
              type: event.type,
              objectId: state.objectId,
              paymentIntentId: state.paymentIntentId,
              status: state.status,
              created: event.created,
            },
          }
        : null;
    return { duplicate: false, applied, handoff };
  });
}

/** Upserts the object's state unless what is stored is further along or newer. */
async function applyState(client: PoolClient, state: ObjectState, event: StripeEvent): Promise<boolean> {
  const { rowCount } = await client.query(
    `insert into stripe_object_states
       (object_id, object_type, payment_intent_id, order_id, status, status_rank, amount_refunded, event_id, event_created)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (object_id) do update
       set status = excluded.status,
           status_rank = excluded.status_rank,
           amount_refunded = coalesce(excluded.amount_refunded, stripe_object_states.amount_refunded),
           payment_intent_id = coalesce(excluded.payment_intent_id, stripe_object_states.payment_intent_id),
           order_id = coalesce(excluded.order_id, stripe_object_states.order_id),
           event_id = excluded.event_id,
           event_created = excluded.event_created,
           updated_at = now()
       where (excluded.status_rank, excluded.event_created, coalesce(excluded.amount_refunded, 0))
           > (stripe_object_states.status_rank, stripe_object_states.event_created, coalesce(stripe_object_states.amount_refunded, 0))`,
    [
      state.objectId,
      state.objectType,
      state.paymentIntentId,
      state.orderId,
      state.status,
      state.rank,
      state.amountRefunded,
      event.id,
      event.created,
    ],
  );
  return rowCount === 1;
}

/** Marks the hand-off done, or says why it is not. */
export async function recordHandoff(db: Pool, eventId: string, error: string | null): Promise<void> {
  await db.query(
    `update stripe_webhook_events
        set handed_off_at = case when $2::text is null then now() else handed_off_at end,
            handoff_error = $2
      where event_id = $1`,
    [eventId, error],
  );
}

/**
 * Deletes recorded webhook events received more than `olderThanMs` ago, together with their inbox
 * receipts, in batches of `batchSize`, each its own statement. Event and receipt go together, so a
 * redelivery meets both or neither. An event that is still some object's latest word
 * (stripe_object_states points at it) is kept, with its receipt, until reapSettledStates has
 * deleted that state: it is what an older event arriving late is compared against.
 */
export async function reapWebhookEvents(db: Queryable, olderThanMs: number, batchSize: number): Promise<number> {
  return deleteInBatches(
    db,
    `with doomed as (
       select e.event_id from stripe_webhook_events e
        where e.received_at <= now() - make_interval(secs => $2::double precision / 1000)
          and not exists (select 1 from stripe_object_states s where s.event_id = e.event_id)
        limit $1 for update of e skip locked),
     receipts as (
       delete from processed_messages p using doomed d where p.subscriber_id = $3 and p.message_id = d.event_id)
     delete from stripe_webhook_events e using doomed d where e.event_id = d.event_id`,
    [olderThanMs, STRIPE_WEBHOOK_SUBSCRIBER],
    batchSize,
  );
}

/**
 * Deletes the states of settled objects (SETTLED_STATUSES) unchanged for `olderThanMs`, in batches
 * of `batchSize`, so their latest-word events become reapable too (reapWebhookEvents, which the
 * reaper runs after this). The horizon is the inbox's, longer than Stripe's 3 days of retries: an
 * older event can then only be a manual resend, and it finds no state and records one, about an
 * object whose order ended long ago. An object still in flight (a hold awaiting capture, a pending
 * refund) keeps its state however old.
 */
export async function reapSettledStates(db: Queryable, olderThanMs: number, batchSize: number): Promise<number> {
  return deleteInBatches(
    db,
    `delete from stripe_object_states where object_id in (
       select object_id from stripe_object_states
        where updated_at <= now() - make_interval(secs => $2::double precision / 1000)
          and ((object_type = 'payment_intent' and status = any($3::text[])) or (object_type = 'refund' and status = any($4::text[])))
        limit $1 for update skip locked)`,
    [olderThanMs, [...SETTLED_STATUSES.payment_intent], [...SETTLED_STATUSES.refund]],
    batchSize,
  );
}
