// The saga's metrics that activities emit (replays, fenced keys, late-capture reviews, Stripe
// request and settlement durations), through the activity's meter or a no-op outside one.
import { asyncLocalStorage } from '@temporalio/activity';
import { noopMetricMeter, type MetricMeter } from '@temporalio/common';
import { SagaMetric } from './metric-names.js';

/*
 * The saga's metrics emitted by activities, through the SDK's activity metric meter (it adds
 * namespace, task_queue and activity_type). Outside an activity (the API, a CLI, a unit test)
 * they go nowhere: the same code runs in every process, and only the worker exports.
 */

/** The running activity's meter, or a no-op one outside an activity. */
export function activityMetricMeter(): MetricMeter {
  return asyncLocalStorage.getStore()?.metricMeter ?? noopMetricMeter;
}

/** An attempt answered with an earlier attempt's outcome: from our records, or Stripe's Idempotent-Replayed. */
export function countReplay(answeredBy: 'ledger' | 'stripe', meter: MetricMeter = activityMetricMeter()): void {
  meter.createCounter(SagaMetric.replays, undefined, 'Attempts answered with an earlier outcome, by who answered').add(1, { answered_by: answeredBy });
}

/** A key closed so that no late attempt under it may act (a compensation found nothing to undo). */
export function countKeyFenced(scope: string): void {
  activityMetricMeter().createCounter(SagaMetric.keysFenced, undefined, 'Idempotency keys fenced against late attempts').add(1, { scope });
}

/** A capture landed after its key was fenced: the order is flagged for a person. */
export function countLateCaptureReview(): void {
  activityMetricMeter().createCounter(SagaMetric.needsReview, undefined, 'Orders put in front of a person').add(1, { source: 'late_capture' });
}

/** One Stripe HTTP request: its endpoint (IDs replaced by {id}), the status class or `error`, and seconds. */
export function recordStripeRequest(meter: MetricMeter, endpoint: string, outcome: string, seconds: number): void {
  meter
    .createHistogram(SagaMetric.stripeRequestDuration, 'float', 's', 'Stripe HTTP requests made by activities')
    .record(Math.max(0, seconds), { endpoint, outcome });
}

/** A settling authorization found decided: how long it took since Stripe's first undecided answer. */
export function recordSettlement(trigger: 'webhook' | 'recheck', seconds: number): void {
  activityMetricMeter()
    .createHistogram(SagaMetric.settlementDuration, 'float', 's', 'Time from an undecided authorization to its settlement')
    .record(Math.max(0, seconds), { trigger });
}
