-- Flat cost at scale (issue 16): two lookups that `npm run bench -- --scale` found reading whole
-- tables once they held a million orders' rows (bench/hot-statements.ts explains every hot
-- statement on the seeded database).
--
-- `if not exists`: on a large live database, build them first with `create index concurrently`
-- under these names (a plain create index blocks the table's writes while it builds), and this
-- migration finds them.
--
-- GET /v1/orders/:id lists an order's refunds by order_id; ledger_one_charge_per_order (003) is
-- partial (kind = 'charge') and cannot serve it: a sequential scan of ~1M rows, 108 ms.
create index if not exists ledger_transactions_order_idx on ledger_transactions (order_id);

-- The webhook reaper deletes old stripe_webhook_events rows; PostgreSQL checks the foreign key
-- stripe_object_states.event_id for each deleted row, and with no index that check scans
-- stripe_object_states once per row, holding the batch's row locks meanwhile (1,000 events took
-- 130 s at a million orders).
create index if not exists stripe_object_states_event_id_idx on stripe_object_states (event_id);
