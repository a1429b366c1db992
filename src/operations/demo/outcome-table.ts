// The demo's closing table: one row per order with how it ended, what was captured, how it was
// undone (refund or void) and its Temporal Web UI link.
import type { OrderReconciliation } from '../reconcile/invariant-checker.js';
import { truncate } from './order-progress.js';
import type { OrderOutcome } from './scenarios.js';

export interface OutcomeRow {
  scenario: string;
  outcome: OrderOutcome;
  money: OrderReconciliation | undefined;
  /** Empty when the scenario's expectations held. */
  problems: string[];
  uiUrl: string;
}

/** The end-of-demo table: one row per order, with its run's Web UI link. */
export function formatOutcomeTable(rows: OutcomeRow[]): string {
  const table = [
    ['', 'scenario', 'order', 'ended', 'captured', 'undone by', 'Web UI'],
    ...rows.map((row) => [
      row.problems.length === 0 ? 'ok' : 'NO',
      row.scenario,
      row.outcome.orderId,
      describeEnd(row.outcome),
      String(row.money?.charges ?? 0),
      undoneBy(row.money),
      row.uiUrl,
    ]),
  ];
  const widths = table[0]?.map((_, column) => Math.max(...table.map((cells) => cells[column]?.length ?? 0))) ?? [];
  return table
    .map((cells) =>
      cells
        .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `  ${line}`)
    .join('\n');
}

/**
 * How the order's payment was undone: a refund of what was captured (Stripe keeps its fee), a
 * void of the hold (free), or nothing to undo.
 */
function undoneBy(money: OrderReconciliation | undefined): string {
  const refunds = money?.refunds ?? 0;
  const voids = money?.voids ?? 0;
  if (refunds > 0) return refunds === 1 ? 'refund' : `${refunds} refunds`;
  if (voids > 0) return voids === 1 ? 'void' : `${voids} voids`;
  return '-';
}

function describeEnd(outcome: OrderOutcome): string {
  const workflow = outcome.workflowStatus === 'COMPLETED' ? '' : ` (workflow ${outcome.workflowStatus.toLowerCase()})`;
  const reason = outcome.reason && outcome.orderStatus !== 'completed' ? `: ${truncate(outcome.reason, 34)}` : '';
  return `${outcome.orderStatus}${workflow}${reason}`;
}
