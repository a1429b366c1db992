-- Retention (issue 16): the reaper (src/operations/retention) deletes rows past their horizon in small
-- batches. These indexes let each batch find its rows without scanning the table; without them
-- every batch would read the whole inbox or outbox. activity_idempotency_expires_idx (002) and
-- api_idempotency_expires_idx (007) serve the key tables already.
create index processed_messages_processed_at_idx on processed_messages (processed_at);
create index outbox_sent_at_idx on outbox (sent_at) where sent_at is not null;
create index stripe_webhook_events_received_at_idx on stripe_webhook_events (received_at);
