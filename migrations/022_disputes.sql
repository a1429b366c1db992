-- Money after the sale (issue 35), step 3: disputes, and early fraud warnings' refunds. Each dispute Stripe opens against an order's
-- charge is worked by a workflow of its own (order-dispute-<dispute ID>), which keeps the
-- dispute's state here and books its money in the ledger.
--
--   ledger kinds     dispute_withdrawal     the disputed amount Stripe withdrew (its balance transaction)
--                    dispute_fee            the dispute fee withdrawn with it (one per dispute)
--                    dispute_reinstatement  the amount given back when the dispute is won
--   disputes         one row per dispute: its order, amount, status, evidence deadline and how it ended.
--
-- A lost dispute books nothing more: the withdrawal stands as the loss.

alter table ledger_transactions
  drop constraint ledger_transactions_kind_check,
  add constraint ledger_transactions_kind_check
    check (kind in ('charge', 'refund', 'dispute_withdrawal', 'dispute_fee', 'dispute_reinstatement')) not valid;
alter table ledger_transactions validate constraint ledger_transactions_kind_check;

create table disputes (
  dispute_id         text primary key check (dispute_id ~ '^dp_'),
  order_id           text not null references orders (order_id),
  payment_intent_id  text not null,
  amount_minor       bigint not null check (amount_minor > 0),
  currency           text not null check (currency ~ '^[a-z]{3}$'),
  reason             text not null,
  -- Stripe's status: warning_needs_response, warning_under_review, warning_closed (an inquiry),
  -- needs_response, under_review, won or lost.
  status             text not null,
  is_inquiry         boolean not null,
  evidence_due_by    timestamptz,
  evidence_submitted boolean not null default false,
  -- How it ended, once closed: won, lost (the evidence did not convince), accepted (by the
  -- merchant), accepted_at_deadline (the deadline policy accepted it), expired (no evidence by the
  -- deadline: lost by default) or closed (an inquiry that ended without a chargeback).
  outcome            text check (outcome in ('won', 'lost', 'accepted', 'accepted_at_deadline', 'expired', 'closed')),
  opened_at          timestamptz not null,
  closed_at          timestamptz,
  updated_at         timestamptz not null default now(),
  constraint disputes_closed_with_outcome check ((outcome is null) = (closed_at is null))
);
create index disputes_order_idx on disputes (order_id);

-- The worker books and keeps the dispute; the API reads it for the order's view and its routes.
grant select, insert, update on disputes to order_payments_worker;
grant select on disputes to order_payments_api;

-- A key may work disputes (submit evidence, accept) only with the scope disputes:write. Keys made
-- before this keep exactly what they could do; `keys create` gives new keys every scope unless
-- --scopes names fewer.
alter table api_keys
  drop constraint api_keys_scopes_check,
  add constraint api_keys_scopes_check
    check (cardinality(scopes) > 0 and scopes <@ array['orders:write', 'refunds:write', 'disputes:write', 'read']) not valid;
alter table api_keys validate constraint api_keys_scopes_check;

-- An early fraud warning's refund is a refund request the worker makes itself (the whole of what
-- is still refundable), so the worker may open a budget and insert a request too.
grant insert on refund_budgets, refund_requests to order_payments_worker;
