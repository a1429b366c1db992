-- The durable record of every side-effecting activity's intent, after the api_idempotency
-- table of the article this project grew from. A key is registered as pending before the
-- downstream call and finished (completed or failed) in the same transaction as the business
-- effect it produced, so "did this already happen?" is always answered from here first.

create table activity_idempotency (
  -- Operation the key belongs to ('stripe.charge', 'stripe.refund'): keys are scoped by
  -- operation so one intent can never be answered with another operation's result.
  scope           text not null,
  idempotency_key text not null check (length(idempotency_key) between 1 and 255),
  -- Hash of the normalized request: the same key with another payload fails loudly (I7).
  request_hash    text not null,
  state           text not null default 'pending' check (state in ('pending', 'completed', 'failed')),
  -- What a replay answers with; null while pending.
  result          jsonb,
  -- Number of times the downstream was called under this key (observability for replays).
  attempts        integer not null default 0,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  -- Kept longer than any replay horizon: Stripe's 24 h key retention, activity retries,
  -- operator resets. Pending keys past Stripe's retention are reconciled, never resent.
  expires_at      timestamptz not null,
  primary key (scope, idempotency_key),
  check ((state = 'pending') = (result is null))
);
create index activity_idempotency_expires_idx on activity_idempotency (expires_at);
