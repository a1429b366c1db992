-- Money after the sale (issue 35), step 1: the names. The outbox and the receipts learn the events
-- a refund request, a dispute and an early fraud warning announce, and the webhook inbox learns the
-- two Stripe objects it now keeps the state of. Later migrations add the tables that hold them.
--
--   order.refund_failed              a merchant refund request Stripe (or our checks) refused later
--   order.disputed                   a dispute was opened against the order's charge
--   order.dispute_evidence_due       the dispute's evidence deadline is near and nothing is submitted
--   order.dispute_closed             the dispute ended: won, lost or accepted
--   order.fraud_warning_refunded     an early fraud warning's policy refunded what was still refundable
--
-- Locks: each check is replaced NOT VALID (reads no rows: every existing row passed the narrower
-- check) and validated after, which lets writes go on.

alter table outbox
  drop constraint outbox_event_type_check,
  add constraint outbox_event_type_check
    check (event_type in ('order.paid', 'order.refunded', 'order.failed', 'order.merchant_refunded',
                          'order.refund_failed', 'order.disputed', 'order.dispute_evidence_due',
                          'order.dispute_closed', 'order.fraud_warning_refunded')) not valid;
alter table outbox validate constraint outbox_event_type_check;

alter table receipts
  drop constraint receipts_event_type_check,
  add constraint receipts_event_type_check
    check (event_type in ('order.paid', 'order.refunded', 'order.failed', 'order.merchant_refunded',
                          'order.refund_failed', 'order.disputed', 'order.dispute_evidence_due',
                          'order.dispute_closed', 'order.fraud_warning_refunded')) not valid;
alter table receipts validate constraint receipts_event_type_check;

alter table stripe_object_states
  drop constraint stripe_object_states_object_type_check,
  add constraint stripe_object_states_object_type_check
    check (object_type in ('payment_intent', 'refund', 'dispute', 'radar.early_fraud_warning')) not valid;
alter table stripe_object_states validate constraint stripe_object_states_object_type_check;
