-- No card data kept (issue 34): the webhook inbox keeps the fields this project reads from a Stripe
-- event, and nothing else. Until now stripe_webhook_events.payload held every event's whole JSON,
-- so a charge.* event kept the customer's billing details (name, email, address, phone) and the
-- card's brand, last4, expiry and fingerprint for as long as the row lived, and a row that was an
-- object's latest word was never reaped.
--
-- What is kept: the IDs (event, object, PaymentIntent, the order from metadata.order_id), the
-- event's type and creation time, and the object's type, status and amounts. The rest of the event
-- is read (its signature verified over the raw bytes, its shape checked) and then dropped.
--
-- Existing rows get the same fields from their payload, and the payload is cleared. Migration 019
-- (the contract step, once no API from before this change runs: it still writes the payload) drops
-- the column, and with it whatever such an API wrote in between.
--
-- Retention: the reaper now also deletes an object's state once the object is settled (a final
-- status) and unchanged for RETENTION_INBOX_DAYS, and with it the event that was its latest word
-- (src/messaging/webhooks/record-stripe-event.ts).
--
-- Locks: the backfill updates every row of stripe_webhook_events once, under this migration's
-- lock; the table holds RETENTION_INBOX_DAYS of events (7 days by default) plus the latest words.

alter table stripe_webhook_events
  add column object_type text,
  add column object_status text,
  add column amount bigint,
  add column amount_refunded bigint,
  add column refunded boolean,
  add column currency text check (currency is null or currency ~ '^[a-z]{3}$'),
  alter column payload drop not null;

update stripe_webhook_events
   set object_type = payload #>> '{data,object,object}',
       object_status = payload #>> '{data,object,status}',
       amount = case when jsonb_typeof(payload #> '{data,object,amount}') = 'number' then (payload #>> '{data,object,amount}')::bigint end,
       amount_refunded = case when jsonb_typeof(payload #> '{data,object,amount_refunded}') = 'number' then (payload #>> '{data,object,amount_refunded}')::bigint end,
       refunded = case when jsonb_typeof(payload #> '{data,object,refunded}') = 'boolean' then (payload #>> '{data,object,refunded}')::boolean end,
       currency = case when payload #>> '{data,object,currency}' ~ '^[a-z]{3}$' then payload #>> '{data,object,currency}' end,
       payload = null
 where payload is not null;

-- The reaper's sweep of settled states, oldest first.
create index stripe_object_states_updated_at_idx on stripe_object_states (updated_at);
