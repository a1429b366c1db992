// OpenTelemetry's semantic conventions, for the traced workflow bundle to evaluate once per worker
// (PRELOADED_TRACING_MODULES in src/platform/temporal/order-worker.ts) instead of once per run.
// The package declares itself free of side effects, so a bare preload of it is dropped by the
// bundler; re-exported from a module of ours, it is evaluated, and the interceptors' own imports
// of it find it evaluated.
export * from '@opentelemetry/semantic-conventions';
