-- Stripe webhooks into the inbox, and payments that settle after the charge request returned.
--
-- The receiving rule: verify the signature, then record the event's receipt (its inbox row in
-- processed_messages, subscriber 'stripe-webhooks', message ID = the event ID) in the same
-- transaction as its effect, before any side effect; a redelivery finds the inbox row and does
-- nothing. Its effect is order-aware: an event never overwrites what a newer one said.

-- Every verified event, once: the receipt a redelivery finds and the record the hand-off to the
-- order's workflow works from. No foreign key to orders: Stripe sends events for objects this
-- database may not know (another integration on the account, a Dashboard action).
create table stripe_webhook_events (
  event_id        text primary key,
  event_type      text not null,
  -- The object the event is about (pi_..., ch_..., re_...) and the PaymentIntent behind it.
  object_id       text not null,
  payment_intent_id text,
  order_id        text,
  -- Stripe's `created`, in Unix seconds: when the change happened, whenever it arrived.
  event_created   bigint not null,
  payload         jsonb not null,
  received_at     timestamptz not null default now(),
  -- False when a newer event had already said more: recorded, acknowledged, not applied.
  applied         boolean not null,
  -- The hand-off (a signal to the order's workflow) happens after the answer to Stripe; these
  -- say whether it did. A failed hand-off loses nothing: the workflow reconciles on its own.
  handed_off_at   timestamptz,
  handoff_error   text
);
create index stripe_webhook_events_order_idx on stripe_webhook_events (order_id);

-- What Stripe's webhooks last said about each PaymentIntent and Refund. A row only moves
-- forward: an event replaces it only when it is further along (status_rank), or as far along and
-- newer (event_created). An older event delivered late is recorded above and changes nothing here.
create table stripe_object_states (
  object_id       text primary key,
  object_type     text not null check (object_type in ('payment_intent', 'refund')),
  payment_intent_id text,
  order_id        text,
  status          text not null,
  status_rank     integer not null,
  amount_refunded bigint,
  event_id        text not null references stripe_webhook_events (event_id),
  event_created   bigint not null,
  updated_at      timestamptz not null default now()
);
create index stripe_object_states_order_idx on stripe_object_states (order_id);

-- A charge key whose PaymentIntent is still settling (processing, or waiting for the customer
-- to authenticate): the request has an answer, the payment has no outcome yet. Its result holds
-- the PaymentIntent, so a retried charge answers with it and the settlement records the outcome
-- under the same key, once. Like pending, it is open: only completed and failed are final.
alter table activity_idempotency drop constraint activity_idempotency_state_check;
alter table activity_idempotency add constraint activity_idempotency_state_check
  check (state in ('pending', 'processing', 'completed', 'failed'));
