// Temporal connection settings from the standard TEMPORAL_* variables or a temporal.toml profile,
// as the `temporal` CLI reads them.
import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';
import { ConfigError } from '../config/config-error.js';

/**
 * Temporal connection settings from the standard environment (`TEMPORAL_ADDRESS`,
 * `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS_*`) or a `temporal.toml` profile:
 * the same variables the `temporal` CLI reads, so pointing at Temporal Cloud is configuration.
 */
export function loadTemporalConnectConfig(): ClientConnectConfig & { namespace: string } {
  try {
    const config = loadClientConnectConfig();
    return { ...config, namespace: config.namespace ?? 'default' };
  } catch (error) {
    throw new ConfigError([
      `Temporal connection: ${error instanceof Error ? error.message : String(error)} (check TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and TEMPORAL_TLS_* or your temporal.toml profile)`,
    ]);
  }
}
