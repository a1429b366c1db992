-- Double-entry ledger. Every Stripe charge and refund has exactly one ledger transaction
-- with the same amount, currency and Stripe object ID (I3); every transaction balances,
-- enforced by the database at commit (I4).

create table ledger_transactions (
  id               bigint generated always as identity primary key,
  order_id         text not null references orders (order_id),
  kind             text not null check (kind in ('charge', 'refund')),
  amount_minor     bigint not null check (amount_minor > 0),
  currency         text not null check (currency ~ '^[a-z]{3}$'),
  -- The PaymentIntent (charge) or Refund (refund) this money movement mirrors.
  stripe_object_id text not null unique,
  -- The activity key that wrote it: a retried or replayed write lands on this constraint.
  idempotency_key  text not null unique,
  request_hash     text not null,
  created_at       timestamptz not null default now()
);
-- An order is charged at most once in the books (I1, at the ledger's level).
create unique index ledger_one_charge_per_order on ledger_transactions (order_id) where kind = 'charge';

create table ledger_postings (
  transaction_id bigint not null references ledger_transactions (id),
  account        text not null,
  direction      text not null check (direction in ('debit', 'credit')),
  amount_minor   bigint not null check (amount_minor > 0),
  primary key (transaction_id, account, direction)
);

-- Postings are append-only: history is corrected by reversal, never by edit.
create function ledger_refuse_mutation() returns trigger language plpgsql as $$
begin
  raise exception 'ledger rows are append-only (% on %)', tg_op, tg_table_name
    using errcode = 'integrity_constraint_violation';
end $$;

create trigger ledger_transactions_append_only before update or delete on ledger_transactions
  for each row execute function ledger_refuse_mutation();
create trigger ledger_postings_append_only before update or delete on ledger_postings
  for each row execute function ledger_refuse_mutation();

-- Runs at commit, once per touched transaction: debits equal credits, and both equal the
-- transaction's amount. An unbalanced transaction cannot commit, whoever writes it.
create function ledger_check_balance() returns trigger language plpgsql as $$
declare
  txn_id bigint;
  txn_amount bigint;
  debits bigint;
  credits bigint;
begin
  if tg_table_name = 'ledger_transactions' then
    txn_id := new.id;
  else
    txn_id := new.transaction_id;
  end if;
  select amount_minor into txn_amount from ledger_transactions where id = txn_id;
  select coalesce(sum(amount_minor) filter (where direction = 'debit'), 0),
         coalesce(sum(amount_minor) filter (where direction = 'credit'), 0)
    into debits, credits
    from ledger_postings where transaction_id = txn_id;
  if debits <> credits or debits <> txn_amount then
    raise exception 'ledger transaction % does not balance: debits %, credits %, amount %',
      txn_id, debits, credits, txn_amount
      using errcode = 'check_violation';
  end if;
  return null;
end $$;

create constraint trigger ledger_transactions_balanced after insert on ledger_transactions
  deferrable initially deferred for each row execute function ledger_check_balance();
create constraint trigger ledger_postings_balanced after insert on ledger_postings
  deferrable initially deferred for each row execute function ledger_check_balance();
