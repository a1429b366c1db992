// Turns a reconciliation report into a summary by status and violated invariant, and formats it
// for a person (npm run reconcile).
import type { ReconciliationReport, Violation } from './invariant-checker.js';

/** What each invariant promises, in the words of DESIGN.md, for people reading a report. */
export const INVARIANT_TITLES: Record<Violation['invariant'], string> = {
  I1: 'at most one capture (one successful charge) per order',
  I2: 'compensated before the capture: the hold voided, no refund; after it: exactly one refund of what was captured; completed: none but merchant refunds',
  I3: 'the ledger matches Stripe: one transaction per capture and refund, and none without its Stripe object',
  I4: 'every ledger transaction balances',
  I5: 'stock never negative; an allocation released exactly once',
  I6: 'every order reaches a terminal state, needs_review with a reason',
  I7: 'a key reused with another payload applies nothing',
  I8: 'no hold outlives its order: a finished order has no PaymentIntent left authorized or deciding',
  I9: 'every dispute’s ledger entries (withdrawal, fee, reinstatement) match Stripe’s balance transactions, and the disputed amount stays withdrawn only while open or once lost',
};

export interface ReconciliationSummary {
  /** True when no invariant is violated. */
  ok: boolean;
  checkedAt: string;
  ordersChecked: number;
  ordersByStatus: Record<string, number>;
  /** Order IDs per violated invariant; only invariants with violations appear. */
  violationsByInvariant: Partial<Record<Violation['invariant'], string[]>>;
  violations: Violation[];
  orders: ReconciliationReport['orders'];
}

export function summarize(report: ReconciliationReport): ReconciliationSummary {
  const ordersByStatus: Record<string, number> = {};
  for (const order of report.orders) ordersByStatus[order.status] = (ordersByStatus[order.status] ?? 0) + 1;
  const violationsByInvariant: ReconciliationSummary['violationsByInvariant'] = {};
  for (const violation of [...report.violations].sort((a, b) => a.invariant.localeCompare(b.invariant))) {
    const orderIds = (violationsByInvariant[violation.invariant] ??= []);
    if (!orderIds.includes(violation.orderId)) orderIds.push(violation.orderId);
  }
  return {
    ok: report.violations.length === 0,
    checkedAt: report.checkedAt,
    ordersChecked: report.orders.length,
    ordersByStatus: Object.fromEntries(Object.entries(ordersByStatus).sort(([a], [b]) => a.localeCompare(b))),
    violationsByInvariant,
    violations: report.violations,
    orders: report.orders,
  };
}

/** The report for a person: counts by status, then each violated invariant with its orders. */
export function formatSummary(summary: ReconciliationSummary): string {
  const lines = [`reconcile: ${summary.ordersChecked} order(s) checked against Stripe at ${summary.checkedAt}`];
  for (const [status, count] of Object.entries(summary.ordersByStatus)) lines.push(`  ${status.padEnd(14)} ${count}`);
  if (summary.ok) {
    lines.push('no violations: I1-I9 hold for every order checked');
    return lines.join('\n');
  }
  lines.push(`${summary.violations.length} violation(s):`);
  for (const [invariant, orderIds] of Object.entries(summary.violationsByInvariant) as [Violation['invariant'], string[]][]) {
    lines.push(`  ${invariant} (${INVARIANT_TITLES[invariant]}): ${orderIds.length} order(s)`);
    for (const violation of summary.violations.filter((found) => found.invariant === invariant)) {
      lines.push(`    ${violation.orderId}  ${violation.message}`);
    }
  }
  return lines.join('\n');
}
