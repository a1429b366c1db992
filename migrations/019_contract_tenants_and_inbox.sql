-- Trust boundaries (issue 34), the contract step. Apply it only once no worker or API process from
-- before issue 34 runs (its pinned runs drained): migration 016 explains the deploy order.
--
-- Inbox: stripe_webhook_events.payload, the whole event migration 018 stopped keeping, is dropped.
--
-- Tenants: the SKU-only key goes, so two tenants may stock SKUs of the same name; inventory is keyed
-- by (tenant_id, sku), and a reservation's stock row by the same pair. The triggers that filled in
-- the tenant for old code go, and no tenant column has a default any more: a statement that names
-- no tenant fails instead of landing in 'default'.
--
-- Locks: the migration runs in one transaction, and its new primary key and foreign key lock
-- inventory and stock_allocations against writes until it commits: the primary key reads the
-- inventory (one row per tenant and SKU), the foreign key reads every reservation. On a large
-- stock_allocations, run it when few orders arrive (reservations wait; nothing fails).

drop trigger orders_fill_tenant on orders;
drop function orders_fill_tenant();
drop trigger stock_allocations_fill_tenant on stock_allocations;
drop function stock_allocations_fill_tenant();
alter table inventory alter column tenant_id drop default;

alter table stock_allocations drop constraint stock_allocations_sku_fkey;
alter table stock_allocations drop constraint stock_allocations_tenant_sku_fkey;
alter table inventory drop constraint inventory_pkey;
alter table inventory drop constraint inventory_tenant_sku_key;
alter table inventory add constraint inventory_pkey primary key (tenant_id, sku);
alter table stock_allocations
  add constraint stock_allocations_tenant_sku_fkey foreign key (tenant_id, sku) references inventory (tenant_id, sku) on update cascade;

-- The inbox: the whole-event payload column goes (migration 018 stopped writing it and cleared it;
-- an API from before 018 may have written more since).
alter table stripe_webhook_events drop column payload;
