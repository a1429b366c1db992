// The trace command (`npm run trace`): prints one order's spans from the local trace store as an
// indented tree.
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { StoredSpan } from './platform/telemetry/tracing.js';
import { renderTraceTree, spansOfOrder } from './platform/telemetry/trace-tree.js';

/**
 * `npm run trace -- --order-id ID [--file PATH] [--sql]`: one order's spans from the local trace
 * store (TRACE_FILE, one JSON line per span) as an indented tree with durations, each failed
 * attempt marked; PostgreSQL queries summed up per span, or one a line with `--sql`.
 * Exit codes: 0 printed; 1 no span of that order; 2 usage, or no trace store.
 */
const program = new Command('trace')
  .description("print one order's trace from the local trace store")
  .requiredOption('--order-id <id>', 'the order ID')
  .option('--file <path>', 'the trace store (default: TRACE_FILE)')
  .option('--sql', 'one line per PostgreSQL query, with its statement, instead of a summary per span', false)
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .action((options: { orderId: string; file?: string; sql: boolean }) => {
    const file = options.file ?? process.env.TRACE_FILE?.trim();
    if (!file) {
      console.error('trace: no trace store: pass --file, or set TRACE_FILE (npm run stack sets it for the processes it starts)');
      process.exit(2);
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      console.error(`trace: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(2);
    }
    const spans = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as StoredSpan);
    const mine = spansOfOrder(spans, options.orderId);
    if (mine.length === 0) {
      console.error(`trace: no span of order '${options.orderId}' in ${file}`);
      process.exit(1);
    }
    const failed = mine.filter((span) => span.status.code === 'error').length;
    console.log(`order ${options.orderId}: ${mine.length} spans, ${failed} failed (${file})`);
    for (const line of renderTraceTree(mine, { sql: options.sql })) console.log(line);
  });
program.parse();
