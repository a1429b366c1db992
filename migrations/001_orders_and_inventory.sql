-- Orders and stock: the business state the saga moves forward and compensates.

create table orders (
  order_id        text primary key,
  customer_id     text not null,
  amount_minor    bigint not null check (amount_minor > 0),
  currency        text not null check (currency ~ '^[a-z]{3}$'),
  sku             text not null,
  quantity        integer not null check (quantity > 0),
  -- Hash of the order's business payload: the same order ID with another payload is refused
  -- (I7) instead of silently reusing the first order.
  request_hash    text not null,
  status          text not null default 'pending'
                  check (status in ('pending', 'paid', 'allocated', 'completed', 'declined',
                                    'compensating', 'compensated', 'needs_review')),
  status_reason   text,
  -- The one charge intent this order may ever have. Claimed atomically by the first charge
  -- attempt; a charge under any other key (a reused workflow ID, a bug) is refused before
  -- Stripe is called. This is I1 enforced by a row, not by hope.
  charge_key      text unique,
  payment_intent_id text,
  refund_id       text,
  workflow_id     text not null,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now()
);

create table inventory (
  sku        text primary key,
  available  integer not null check (available >= 0)
);

-- One row per allocation intent, keyed by the allocating activity's idempotency key, so a
-- retried allocation finds its row instead of decrementing twice (I5).
create table stock_allocations (
  idempotency_key text primary key,
  order_id        text not null references orders (order_id),
  sku             text not null references inventory (sku),
  quantity        integer not null check (quantity > 0),
  request_hash    text not null,
  state           text not null default 'allocated' check (state in ('allocated', 'released')),
  -- Key of the compensation that released it; recorded for audit, the state flip is what
  -- makes the release happen once.
  release_key     text,
  created_at      timestamptz not null default now(),
  released_at     timestamptz,
  check ((state = 'released') = (released_at is not null))
);
create index stock_allocations_order_idx on stock_allocations (order_id);
