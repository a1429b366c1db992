-- The public API's contract (issue 8): tenants' API keys, the api_idempotency table shaped as
-- the article shapes it, its tombstones, and which tenant owns each API-created order.

-- An API key is a high-entropy random secret; only its SHA-256 is stored. A fast hash is right
-- here (unlike a password): 256 random bits cannot be guessed, so a slow hash would add nothing
-- but latency to every request, and an exact-match lookup by hash stays an index probe.
create table api_keys (
  key_hash    text primary key check (key_hash ~ '^[0-9a-f]{64}$'),
  tenant_id   text not null check (tenant_id ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$'),
  -- The key's first characters, so an operator can tell keys apart without the secret.
  key_prefix  text not null,
  created_at  timestamptz not null default now()
);
create index api_keys_tenant_idx on api_keys (tenant_id);

-- One row per (tenant, operation, key): the caller's intent, persisted before any effect.
create table api_idempotency (
  tenant_id       text not null,
  operation       text not null,
  idempotency_key text not null check (length(idempotency_key) between 1 and 255),
  -- SHA-256 of the normalized (validated) request: the key cannot be reused for another payload.
  request_hash    text not null,
  state           text not null check (state in ('pending', 'completed', 'failed')),
  status_code     integer,
  response_body   jsonb,
  resource_type   text,
  -- Fixed on the first insert (e.g. the order ID), so a retry after a crash acts on the same
  -- resource and Temporal's workflow-ID policy attaches it to the run already started.
  resource_id     text,
  created_at      timestamptz not null default now(),
  -- When the full record (the stored response) may be reaped; a tombstone outlives it.
  expires_at      timestamptz not null,
  -- The lease of the request working on a pending row. Live (in the future): another request
  -- gets 409 with Retry-After. Expired or null: the holder crashed or gave up; take over.
  locked_until    timestamptz,
  primary key (tenant_id, operation, idempotency_key),
  check ((state = 'pending') = (status_code is null)),
  check (state = 'pending' or locked_until is null)
);
create index api_idempotency_expires_idx on api_idempotency (expires_at);

-- What is left of a reaped record: enough to refuse a late retry loudly (same hash: name the
-- resource it created; another hash: 422) without keeping the full response for months.
create table api_idempotency_tombstones (
  tenant_id       text not null,
  operation       text not null,
  idempotency_key text not null,
  request_hash    text not null,
  resource_type   text,
  resource_id     text,
  created_at      timestamptz not null,
  expires_at      timestamptz not null,
  primary key (tenant_id, operation, idempotency_key)
);
create index api_idempotency_tombstones_expires_idx on api_idempotency_tombstones (expires_at);

-- Which tenant owns an order created through the API, and what it asked for: written with the
-- pending idempotency row, before the workflow starts, so GET answers (and isolates) at once.
-- No foreign key to orders: the worker records the order row when the saga begins.
create table api_orders (
  order_id    text primary key,
  tenant_id   text not null,
  request     jsonb not null,
  created_at  timestamptz not null default now()
);
create index api_orders_tenant_idx on api_orders (tenant_id);
