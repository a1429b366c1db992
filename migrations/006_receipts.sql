-- The receipts service: the sample consumer of the order events the outbox publishes. It pairs
-- with its own inbox (processed_messages, subscriber 'receipts'): the inbox row and the receipt
-- commit in one transaction, so a redelivered or republished event finds the inbox row and
-- writes nothing.
--
-- Deliberately no unique key on the event here: most real effects (an email, a counter, a call
-- to another service) have none, and the inbox is what must make them happen once. A test that
-- counts receipts therefore proves the inbox, not a constraint that would hide its absence.
-- No foreign key to orders either: a consumer owns its data and may live in another database.
create table receipts (
  id               bigint generated always as identity primary key,
  -- The event it came from: the outbox row ID, published as Nats-Msg-Id.
  message_id       text not null,
  order_id         text not null,
  event_type       text not null check (event_type in ('order.paid', 'order.refunded', 'order.failed')),
  amount_minor     bigint not null check (amount_minor > 0),
  currency         text not null check (currency ~ '^[a-z]{3}$'),
  -- The PaymentIntent (paid) or Refund (refunded) the receipt is for; null for a failure notice
  -- without a charge.
  stripe_object_id text,
  order_status     text not null,
  reason           text,
  occurred_at      timestamptz not null,
  created_at       timestamptz not null default now()
);
create index receipts_order_idx on receipts (order_id);
