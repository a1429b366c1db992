-- Least privilege (issue 34): a database role per service, each granted only the tables and
-- operations its code runs, and API keys that can be limited to what their holder does. Until now
-- every service connected as one all-powerful role (the stack as the superuser), so the
-- internet-facing API could write the ledger and mint API keys; and every key could do everything,
-- forever.
--
-- The roles are group roles (NOLOGIN): a deployment logs in as a user of its own that is a member,
--   create role payments_api_1 login password '...' in role order_payments_api;
-- and the stack does the same with generated passwords (src/operations/stack/database-roles.ts).
--   order_payments_migrator  owns every table, sequence and function: what `npm run db:migrate`
--                            runs as (src/platform/db/migrate.ts sets it for each migration after
--                            this one). No service is it or a member of it.
--   order_payments_worker    the saga's activities and the retention reaper's sweeps.
--   order_payments_api       the HTTP service: API keys (read only), its Idempotency-Keys, its
--                            tenants' orders (read), Stripe's webhooks into the inbox.
--   order_payments_outbox    the outbox dispatcher: reads and marks the outbox, nothing else.
--   order_payments_receipts  the sample consumer: its receipts and its inbox rows.
-- Operator commands (keys create/revoke, reconcile, reap, the demo's seeding) run with an
-- operator's URL, not a service's.
--
-- A new table gets its grants in the migration that creates it, beside the create table, for each
-- service that touches it: docs/security.md ("Granting a new table") says how, and
-- test/integration/service-roles.test.ts fails for a table no service role is granted.
--
-- Roles belong to the whole PostgreSQL cluster, not to one database: several databases on one
-- server (test runs, a stack beside a shared database) share them. They are created only when
-- missing, and a concurrent migrator creating the same role is not an error.

do $$
declare
  role_name text;
begin
  foreach role_name in array array['order_payments_migrator', 'order_payments_worker', 'order_payments_api', 'order_payments_outbox', 'order_payments_receipts'] loop
    begin
      if not exists (select 1 from pg_roles where rolname = role_name) then
        execute format('create role %I nologin', role_name);
      end if;
    exception when duplicate_object or unique_violation then
      null; -- another database's migration created it at the same moment
    end;
  end loop;
end $$;

-- Nobody connects to this database unless granted; each service's role is.
do $$
begin
  execute format('revoke all on database %I from public', current_database());
  execute format('grant connect on database %I to order_payments_migrator, order_payments_worker, order_payments_api, order_payments_outbox, order_payments_receipts', current_database());
end $$;

-- The migrator owns the schema's objects and may create more; nobody else may create anything.
revoke create on schema public from public;
grant usage, create on schema public to order_payments_migrator;
grant usage on schema public to order_payments_worker, order_payments_api, order_payments_outbox, order_payments_receipts;

do $$
declare
  object record;
begin
  for object in select c.relname from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') loop
    execute format('alter table public.%I owner to order_payments_migrator', object.relname);
  end loop;
  for object in select p.oid::regprocedure as signature from pg_proc p where p.pronamespace = 'public'::regnamespace loop
    execute format('alter function %s owner to order_payments_migrator', object.signature);
  end loop;
end $$;

-- The worker: the saga's activities (orders, stock, payment keys, holds, the ledger, the outbox
-- events they write) and the retention reaper's deletes (keys, sent outbox rows, webhook events and
-- their inbox rows, object states).
grant select, insert, update on orders, stock_allocations, payment_holds to order_payments_worker;
grant select, update on inventory to order_payments_worker;
grant select, insert, update, delete on activity_idempotency to order_payments_worker;
grant select, insert on ledger_transactions, ledger_postings to order_payments_worker;
grant select, insert, delete on outbox to order_payments_worker;
grant select, delete on processed_messages, stripe_webhook_events, stripe_object_states to order_payments_worker;
-- The reaper locks the rows it deletes (select ... for update skip locked, so two sweeps never wait
-- on each other), and PostgreSQL wants UPDATE on a column of a table to lock its rows: one column
-- each, which no code of the worker writes.
grant update (last_error) on outbox to order_payments_worker;
grant update (processed_at) on processed_messages to order_payments_worker;
grant update (handoff_error) on stripe_webhook_events to order_payments_worker;
grant update (updated_at) on stripe_object_states to order_payments_worker;

-- The API: reads keys (never writes them), owns its Idempotency-Key records and their tombstones
-- (the reaper in the API process compacts and deletes them), records its tenants' orders, reads an
-- order's progress and refunds, and records Stripe's webhooks with their inbox rows. No ledger, no
-- stock, no payment keys, no outbox.
grant select on api_keys to order_payments_api;
grant select, insert, update, delete on api_idempotency, api_idempotency_tombstones to order_payments_api;
grant select, insert on api_orders to order_payments_api;
grant select on orders, ledger_transactions to order_payments_api;
grant select, insert, update on stripe_webhook_events, stripe_object_states to order_payments_api;
grant select, insert on processed_messages to order_payments_api;

-- The outbox dispatcher: claims, publishes and marks rows.
grant select, update on outbox to order_payments_outbox;

-- The receipts consumer: its receipts, through its inbox.
grant select, insert on receipts, processed_messages to order_payments_receipts;

-- API keys get scopes and an optional expiry. A key may do only what its scopes name (a refused
-- scope is a 403), and after expires_at it is refused like a revoked one (401). Keys that exist
-- keep what they could do (all three scopes) and never expire; `keys create --scopes` and
-- `--expires-in-days` make narrower ones.
--   orders:write   POST /v1/orders
--   refunds:write  POST /v1/orders/:id/refunds
--   read           GET /v1/orders/:id and the refund requests' GETs
alter table api_keys
  add column scopes text[] not null default '{orders:write,refunds:write,read}'
    check (cardinality(scopes) > 0 and scopes <@ array['orders:write', 'refunds:write', 'read']),
  add column expires_at timestamptz check (expires_at is null or expires_at > created_at);
