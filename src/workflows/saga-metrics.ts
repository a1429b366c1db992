// The metrics the saga workflow emits (order outcomes, compensations, reviews, settlement waits),
// counted once even when the history replays.
import { metricMeter } from '@temporalio/workflow';
import type { OrderStatus } from '../domain/order-result.js';
import { SagaMetric } from '../platform/telemetry/metric-names.js';

/*
 * The saga's metrics, through the SDK's workflow metric meter. Emitting issues no command, and
 * the SDK drops what a replaying workflow emits, so each event is counted once, when it happens,
 * and histories replay unchanged. The meter adds namespace, task_queue and workflow_type.
 */

export function countOrderOutcome(outcome: OrderStatus): void {
  metricMeter.createCounter(SagaMetric.orders, undefined, 'Orders that reached a terminal status, by outcome').add(1, { outcome });
  if (outcome === 'needs_review') countNeedsReview('saga');
}

export function countNeedsReview(source: 'saga'): void {
  metricMeter.createCounter(SagaMetric.needsReview, undefined, 'Orders put in front of a person').add(1, { source });
}

export function countCompensation(kind: 'void' | 'refund' | 'release'): void {
  metricMeter.createCounter(SagaMetric.compensations, undefined, 'Compensations that undid something, by kind').add(1, { kind });
}

/** One wait of a settling authorization ended: by its webhook, or by the recheck timer (no webhook in time). */
export function countSettlementWait(endedBy: 'webhook' | 'recheck'): void {
  metricMeter.createCounter(SagaMetric.settlementWaits, undefined, 'Waits for a settling authorization, by what ended them').add(1, { ended_by: endedBy });
}
