-- The message side. Consumers pair with an inbox, producers with an outbox: a message's
-- receipt (inbox) or its publication intent (outbox) commits in the same transaction as the
-- business change it belongs to, so a redelivery or a crash can neither lose nor double it.

-- Inbox: proof that a subscriber already handled a message. A redelivered message hits the
-- primary key and is acknowledged without effect.
create table processed_messages (
  subscriber_id text not null,
  message_id    text not null,
  processed_at  timestamptz not null default now(),
  primary key (subscriber_id, message_id)
);

-- Outbox: events to publish at least once, written with the change they announce. The
-- dispatcher publishes rows in id order with the id as the broker's deduplication ID and marks
-- a row sent only after the broker acknowledged it.
create table outbox (
  id           bigint generated always as identity primary key,
  event_type   text not null check (event_type in ('order.paid', 'order.refunded', 'order.failed')),
  order_id     text not null references orders (order_id),
  payload      jsonb not null,
  created_at   timestamptz not null default now(),
  sent_at      timestamptz,
  attempts     integer not null default 0,
  last_error   text
);
-- The dispatcher's work queue: only unsent rows, oldest first.
create index outbox_unsent_idx on outbox (id) where sent_at is null;
-- One event of each kind per order: a retried or replayed transaction cannot announce twice.
create unique index outbox_one_event_per_kind on outbox (order_id, event_type);
