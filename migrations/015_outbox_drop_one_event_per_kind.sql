-- One outbox event per merchant refund (issue 17), step 2 of 2: contract. Apply it only once
-- every worker runs the code that writes events `on conflict (order_id, event_type, event_key)`
-- (migration 014 explains why, and the deploy order): a worker from before still writes
-- `on conflict (order_id, event_type)`, which PostgreSQL cannot plan without the index dropped
-- here, so its captures and refunds would fail to record (and be retried) until it is replaced.
--
-- outbox_one_event_per_key (014) keeps the saga's events one per kind (their event_key is '') and
-- makes each merchant refund's event one per refund request; this index only stops an order's
-- second merchant refund from being announced.
--
-- The checks 014 widened NOT VALID are validated first: validation takes a lock that lets writes
-- go on while it reads the tables, and finds nothing to refuse. The drop comes last, so its brief
-- exclusive lock on the outbox is held only for the rest of this transaction.

alter table outbox validate constraint outbox_event_type_check;
alter table receipts validate constraint receipts_event_type_check;

drop index outbox_one_event_per_kind;
