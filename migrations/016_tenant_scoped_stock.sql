-- Tenants share nothing (issue 34), step 1 of 2: expand. Stock, orders and reservations are keyed
-- by tenant. Until now `inventory` was keyed by SKU alone, so any tenant could reserve (and drain,
-- and probe through out_of_stock answers) any other tenant's SKU.
--
-- After this change:
--   * inventory(tenant_id, sku): each tenant's stock of each SKU; two tenants may both sell 'widget'.
--   * orders.tenant_id: who placed the order (the API key's tenant; the starter's --tenant, default
--     'default').
--   * stock_allocations.tenant_id: whose stock the reservation took, so its release returns the
--     units to that same row. A reservation only ever takes stock of its order's tenant.
--
-- Existing rows. The stock that existed was one pool shared by every tenant; it becomes tenant
-- 'default' (the starter's tenant), and so do the reservations taken from it. An order created
-- through the API takes its tenant from api_orders; every other order is 'default'. An operator
-- whose API tenants sell from that stock gives each SKU to its tenant (CHANGELOG.md, "Unreleased"):
--   update inventory set tenant_id = 'acme-shop' where tenant_id = 'default' and sku = any('{...}');
-- The reservations follow their stock row (on update cascade below), so a later release returns
-- the units to the row's new owner.
--
-- Old and new code side by side (workers from before this change finish their pinned runs). Old
-- code writes inventory, orders and stock_allocations without a tenant, and finds stock by SKU
-- alone. While this step alone is applied, a SKU is still unique across tenants (inventory_pkey
-- stays), so the old statements still touch exactly one row, and triggers fill in the tenant old
-- code leaves out: an order's from api_orders (else 'default'), a reservation's from its stock row.
-- Migration 019 (the contract step) drops the triggers and the SKU-only key once no old worker runs:
--   1. npm run db:migrate -- --through 018_inbox_keeps_fields.sql
--   2. deploy the workers, then the API (and give API tenants their SKUs, above);
--   3. once the old build is drained: npm run db:migrate (019 and later).

-- The tenant ID pattern of api_keys.tenant_id (migration 007).
alter table inventory
  add column tenant_id text not null default 'default' check (tenant_id ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$');
alter table inventory add constraint inventory_tenant_sku_key unique (tenant_id, sku);

alter table orders add column tenant_id text check (tenant_id ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$');
update orders o set tenant_id = coalesce((select a.tenant_id from api_orders a where a.order_id = o.order_id), 'default');
alter table orders alter column tenant_id set not null;

alter table stock_allocations add column tenant_id text;
update stock_allocations set tenant_id = 'default';
alter table stock_allocations alter column tenant_id set not null;
-- A reservation names the stock row it took from; moving a SKU to its tenant moves its open
-- reservations with it.
alter table stock_allocations
  add constraint stock_allocations_tenant_sku_fkey foreign key (tenant_id, sku) references inventory (tenant_id, sku) on update cascade;

-- The expand window's bridge for code from before this change (dropped by 019).
create function orders_fill_tenant() returns trigger language plpgsql as $$
begin
  if new.tenant_id is null then
    new.tenant_id := coalesce((select a.tenant_id from api_orders a where a.order_id = new.order_id), 'default');
  end if;
  return new;
end $$;
create trigger orders_fill_tenant before insert on orders for each row execute function orders_fill_tenant();

create function stock_allocations_fill_tenant() returns trigger language plpgsql as $$
begin
  if new.tenant_id is null then
    -- Old code: the SKU is still unique while 019 is not applied, so this is its one stock row.
    new.tenant_id := (select i.tenant_id from inventory i where i.sku = new.sku);
  end if;
  return new;
end $$;
create trigger stock_allocations_fill_tenant before insert on stock_allocations for each row execute function stock_allocations_fill_tenant();
