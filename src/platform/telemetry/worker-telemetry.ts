// The worker's Temporal Runtime telemetry: the SDK's Prometheus exporter serving its runtime
// metrics and the saga's metrics on one endpoint.
import type { TelemetryOptions } from '@temporalio/worker';
import { SagaMetric, SETTLEMENT_WAIT_BUCKETS, STRIPE_DURATION_BUCKETS } from './metric-names.js';

/**
 * The worker's Runtime telemetry: the SDK's own Prometheus exporter on 127.0.0.1:`port`, at
 * /metrics. It serves the SDK's runtime metrics (`temporal_*`: task latencies, slots, sticky
 * cache, polls) and the saga's `order_payments_*` metrics emitted through the SDK's metric meter,
 * on one endpoint. Durations are in seconds, so the histograms read like the rest of Prometheus.
 * Null: no exporter (WORKER_METRICS_PORT=0).
 */
export function workerTelemetryOptions(port: number | null): TelemetryOptions | undefined {
  if (port === null) return undefined;
  return {
    metrics: {
      prometheus: {
        bindAddress: `127.0.0.1:${port}`,
        useSecondsForDurations: true,
        histogramBucketOverrides: {
          [SagaMetric.stripeRequestDuration]: STRIPE_DURATION_BUCKETS,
          [SagaMetric.settlementDuration]: SETTLEMENT_WAIT_BUCKETS,
        },
      },
    },
  };
}
