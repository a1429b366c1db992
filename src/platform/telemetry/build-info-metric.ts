// The build a service runs, as the metric every Prometheus setup joins on: order_payments_build_info.
import { Gauge, type Registry } from 'prom-client';

/** `order_payments_build_info{service, build_id} 1` in the service's registry. */
export function registerBuildInfo(registry: Registry, labels: { service: string; buildId: string }): void {
  new Gauge({
    name: 'order_payments_build_info',
    help: 'The build this process runs: always 1, labelled with its build ID',
    labelNames: ['service', 'build_id'] as const,
    registers: [registry],
  }).set({ service: labels.service, build_id: labels.buildId }, 1);
}
