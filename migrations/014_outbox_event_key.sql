-- One outbox event per merchant refund (issue 17), step 1 of 2: expand. Nothing here removes or
-- narrows anything, so workers, dispatchers and consumers from before this change run unchanged
-- against it.
--
-- Until now an order had at most one outbox event of each type (outbox_one_event_per_kind,
-- migration 004). That is right for the saga's events, each of which happens at most once per
-- order: one capture (order.paid), one compensation refund (order.refunded), one ending
-- (order.failed). A completed order may have several merchant refunds, though, full or partial
-- (POST /v1/orders/:id/refunds), and each one moves money, so each is announced once, with the
-- ledger's refund, in the same transaction.
--
-- An event's identity becomes (order_id, event_type, event_key):
--   * the saga's events keep event_key = '' (the default): still one of each type per order, and
--     every row already in the table is one of those;
--   * a merchant refund's event has event_key = its refund request ID (rfd_..., the API's refund
--     resource, fixed with the request's Idempotency-Key and the refund workflow's identity): one
--     event per refund request, however often its recording transaction is retried or replayed.
-- '' rather than null for "one per kind": a unique index treats nulls as distinct, so null would
-- stop deduplicating the saga's events.
--
-- The merchant refund's event type is a new one, order.merchant_refunded, rather than a second
-- order.refunded. order.refunded means the saga compensated the order: the capture was returned
-- whole, the order is on its way to 'compensated', and an order.failed follows. A merchant refund
-- leaves the order 'completed' (I2), may be partial, and may happen several times. A consumer
-- acting on order.refunded (cancel the shipment, release the goods) must not act on a merchant's
-- goodwill refund of 5.00; a new type keeps the two apart on the wire (orders.order.refunded and
-- orders.order.merchant_refunded) and leaves order.refunded's meaning as it was.
--
-- Why the old index stays for now. Workers from before this change write every event with
-- `on conflict (order_id, event_type) do nothing`, and PostgreSQL plans that statement only while
-- a non-partial unique index on exactly those two columns exists: neither the new three-column
-- index nor a partial (order_id, event_type) index is inferred for it, and the insert fails with
-- "no unique or exclusion constraint matching the ON CONFLICT specification", rolling back the
-- capture or refund it belongs to. So no index design lets old workers and several merchant
-- refund events per order coexist: while outbox_one_event_per_kind exists, an order can have one
-- order.merchant_refunded row. Migration 015 drops it once no old worker runs. The deploy order:
--   1. npm run db:migrate -- --through 014_outbox_event_key.sql
--   2. deploy the receipts consumers (they accept the new event type), then the dispatchers, the
--      workers (they write on conflict (order_id, event_type, event_key)) and the API;
--   3. npm run db:migrate (migration 015).
-- Between 2 and 3 an order's first merchant refund is recorded and announced as usual; a second
-- one is refunded at Stripe, but its recording transaction meets the old index and is retried
-- (a retryable error saying migration 015 is pending, src/messaging/outbox/order-events.ts), so
-- it is booked and announced, once, as soon as 015 is applied. Nothing is lost or doubled.
--
-- Locks. The constant default adds the column without rewriting the table; its length check and
-- the new index read the outbox once under the migration's lock, and the outbox holds only the
-- rows not yet reaped (sent rows go after RETENTION_OUTBOX_SENT_DAYS). On a large outbox, build the
-- index beforehand with `create unique index concurrently` under the same name: `if not exists`
-- finds it. The widened event_type checks are added NOT VALID, which reads no rows: every existing
-- row passed the narrower check they replace. Migration 015 validates them, which locks out no
-- writes.

alter table outbox
  add column event_key text not null default '' check (length(event_key) <= 255);

create unique index if not exists outbox_one_event_per_key on outbox (order_id, event_type, event_key);

alter table outbox
  drop constraint outbox_event_type_check,
  add constraint outbox_event_type_check
    check (event_type in ('order.paid', 'order.refunded', 'order.failed', 'order.merchant_refunded')) not valid;

-- The sample receipts consumer keeps one receipt per event it applies, the merchant refund's too.
alter table receipts
  drop constraint receipts_event_type_check,
  add constraint receipts_event_type_check
    check (event_type in ('order.paid', 'order.refunded', 'order.failed', 'order.merchant_refunded')) not valid;
