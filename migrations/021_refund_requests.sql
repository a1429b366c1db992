-- Money after the sale (issue 35), step 2: refund requests a merchant can follow.
--
--   refund_budgets    one row per order a merchant refund was asked of: what was captured and how
--                     much of it refund requests have reserved (pending or succeeded). The check
--                     is the guarantee: however many requests arrive at once, their reservations
--                     never exceed the capture, whatever the code above it does.
--   refund_requests   one row per refund request (POST /v1/orders/:id/refunds), its status
--                     pending -> succeeded (with the Stripe Refund) or pending -> failed (with why).
--                     A failed request gives its reservation back, in the same transaction.
--
-- A budget opens on the order's first refund request, with the refunds the ledger already booked
-- counted as reserved, so refunds made before this migration keep counting.

create table refund_budgets (
  order_id        text primary key,
  tenant_id       text not null,
  currency        text not null check (currency ~ '^[a-z]{3}$'),
  captured_minor  bigint not null check (captured_minor > 0),
  reserved_minor  bigint not null default 0,
  updated_at      timestamptz not null default now(),
  constraint refund_budgets_within_capture check (reserved_minor >= 0 and reserved_minor <= captured_minor)
);

create table refund_requests (
  refund_request_id  text primary key,
  tenant_id          text not null,
  order_id           text not null references refund_budgets (order_id),
  amount_minor       bigint not null check (amount_minor > 0),
  currency           text not null check (currency ~ '^[a-z]{3}$'),
  status             text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  stripe_refund_id   text,
  failure_reason     text,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now(),
  -- Each status carries exactly what it says: a refund when it succeeded, a reason when it failed.
  constraint refund_requests_outcome check (
    (status = 'pending' and stripe_refund_id is null and failure_reason is null)
    or (status = 'succeeded' and stripe_refund_id is not null and failure_reason is null)
    or (status = 'failed' and stripe_refund_id is null and failure_reason is not null)
  )
);
create index refund_requests_order_idx on refund_requests (order_id, created_at);

-- The API reserves (opens the budget, inserts the request, raises the reservation) and reads; the
-- worker settles (moves a request out of pending, gives a failed one's reservation back) and reads.
grant select, insert, update (reserved_minor, updated_at) on refund_budgets to order_payments_api;
grant select, insert on refund_requests to order_payments_api;
grant select, update (reserved_minor, updated_at) on refund_budgets to order_payments_worker;
grant select, update (status, stripe_refund_id, failure_reason, updated_at) on refund_requests to order_payments_worker;
