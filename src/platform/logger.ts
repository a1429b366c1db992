// The JSON-lines logger every process uses, carrying the active trace and span IDs, and the
// bridge that routes the Temporal SDK's logs through it.
import { DefaultLogger, type LogLevel } from '@temporalio/worker';
import { pino, type DestinationStream, type Logger } from 'pino';
import { loggerOptions } from './logger-options.js';

export { loggerOptions, REDACTED_LOG_PATHS } from './logger-options.js';

/**
 * JSON lines on stdout (or `destination`): one event per line, ready for any log pipeline. A line
 * written inside a span (a request, an activity attempt) carries its `trace_id` and `span_id`.
 */
export function createLogger(name: string, destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(name), destination) : pino(loggerOptions(name));
}

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Routes the Temporal SDK's logs (including activity `log` calls, which carry the workflow ID,
 * run ID and activity ID) through the same JSON logger.
 */
export function temporalLogger(logger: Logger): DefaultLogger {
  return new DefaultLogger('INFO', ({ level, message, meta }) => {
    logger[LEVELS[level]](meta ?? {}, message);
  });
}
