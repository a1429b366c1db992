-- Hold, then capture (issue 13). The saga reserves stock, authorizes the card with
-- capture_method=manual (a hold), and captures last. An order that fails before the capture has
-- its hold voided, which costs nothing; only captured money is ever refunded.

-- The new flow's statuses: pending -> reserved -> authorized -> paid (captured) -> completed.
-- 'allocated' stays for runs that started on the charge-first shape (charge, then allocate).
alter table orders drop constraint orders_status_check;
alter table orders add constraint orders_status_check
  check (status in ('pending', 'reserved', 'authorized', 'paid', 'allocated', 'completed', 'declined',
                    'compensating', 'compensated', 'needs_review'));

-- orders.charge_key keeps its name and its rule: the one payment key this order may ever have.
-- In the new flow it is claimed by the authorization's key, before Stripe is called.
comment on column orders.charge_key is
  'The key of the order''s one payment: the charge (charge-first runs) or the authorization (hold-then-capture). Claimed before Stripe is called; any other key is refused.';

-- A hold is not money, so it is not in the double-entry books. This memo says where each
-- order's authorization stands, for operators (which holds are open, and until when) and for the
-- reconciliation (I8: no hold outlives its order). It is written in the same transactions as the
-- keys that move it; decisions are taken on the keys and on Stripe, never on this memo alone.
create table payment_holds (
  order_id          text primary key references orders (order_id),
  payment_intent_id text not null unique,
  amount_authorized bigint not null check (amount_authorized > 0),
  currency          text not null check (currency ~ '^[a-z]{3}$'),
  -- Stripe's payment_method_details.card.capture_before: after it the authorization lapses.
  capture_before    timestamptz not null,
  state             text not null default 'held' check (state in ('held', 'captured', 'voided', 'expired')),
  amount_captured   bigint check (amount_captured > 0 and amount_captured <= amount_authorized),
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now(),
  check ((state = 'captured') = (amount_captured is not null))
);
-- What an operator watches: open holds by how soon they lapse.
create index payment_holds_open_idx on payment_holds (capture_before) where state = 'held';
