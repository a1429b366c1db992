/**
 * The saga's own metric names (issue 15), one place for the worker that emits them, the tests
 * and the README. Pure data: the workflow bundle imports it too.
 *
 * The worker's Prometheus endpoint (127.0.0.1:WORKER_METRICS_PORT/metrics) serves these next to
 * the SDK's `temporal_*` runtime metrics. Labels carry outcomes and kinds, never an order ID, a
 * customer, an amount or a payment method.
 */
export const SagaMetric = {
  /** Counter {outcome}: completed, declined, compensated, needs_review. Emitted by the workflow. */
  orders: 'order_payments_orders_total',
  /** Counter {kind}: void, refund, release; counted when the undo really changed something. */
  compensations: 'order_payments_compensations_total',
  /** Counter {answered_by}: ledger (our records, Stripe not called), stripe (Idempotent-Replayed); the SDK adds the activity's labels. */
  replays: 'order_payments_replays_total',
  /** Histogram {endpoint, outcome}, seconds: every Stripe HTTP request the worker makes. */
  stripeRequestDuration: 'order_payments_stripe_request_duration_seconds',
  /** Counter {scope}: keys closed so that no late attempt may act (stripe.authorize, stripe.capture). */
  keysFenced: 'order_payments_keys_fenced_total',
  /** Counter {source}: orders put in front of a person (saga: ended needs_review; late_capture). */
  needsReview: 'order_payments_needs_review_total',
  /** Counter {ended_by}: waits of an authorization still settling; webhook, or recheck (no webhook in time). Emitted by the workflow. */
  settlementWaits: 'order_payments_settlement_waits_total',
  /** Histogram {trigger}, seconds: from Stripe's first undecided answer until the settlement found it decided. */
  settlementDuration: 'order_payments_settlement_seconds',
} as const;

/** Bucket boundaries in seconds: Stripe answers in tens of milliseconds to tens of seconds. */
export const STRIPE_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
/** Settlements take from a webhook's moment to the recheck interval (15 minutes by default) or longer. */
export const SETTLEMENT_WAIT_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600];
