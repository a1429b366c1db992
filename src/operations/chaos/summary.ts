// Formats a chaos run's report as a dozen lines for a terminal or CI log, ending PASS or FAIL.
import type { ChaosReport } from './chaos-run.js';

const OUTCOME_ORDER = ['completed', 'declined', 'compensated', 'cancelled before it began', 'needs_review', 'unfinished'];

/** The run in a dozen lines, for a person reading a terminal or a CI log. */
export function formatChaosSummary(report: ChaosReport): string {
  const o = report.options;
  const f = report.faults;
  const r = report.retries;
  const postgres = report.replays.servedByPostgres;
  const outcomes = Object.entries(report.outcomes)
    .sort(([a], [b]) => rank(a) - rank(b))
    .map(([outcome, count]) => `${outcome} ${count}`)
    .join(' · ');
  const lines = [
    `chaos run: ${o.orders} orders, ${o.workers} workers, seed ${o.seed}; faults for ${o.durationSeconds} s; the last order ended after ${report.seconds.orders} s (${report.seconds.total} s in all)`,
    `orders      ${outcomes}`,
    `  by intent ${(['success', 'decline', 'scarce', 'cancel'] as const)
      .map((intent) => `${intent}: ${Object.entries(report.outcomesByIntent[intent]).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`)
      .join(' | ')}`,
    `faults      Stripe responses dropped after commit ${f.responsesDropped} · Stripe 500s ${f.failed500} · 429s ${f.failed429} · delayed ${f.delayed} · workers SIGKILLed ${f.workerKills} · Postgres backends terminated ${f.backendTerminations} · workflow resets ${f.resets} of ${f.resetsPlanned}${f.resetsFailed > 0 ? ` (+${f.resetsFailed} refused)` : ''}`,
    `retries     activity retries ${r.activityRetries} over ${r.activitiesRetried} activities (workflow histories) · keyed Stripe intents re-attempted ${r.keyedReattempts} times over ${r.keyedIntents} keys (activity_idempotency)`,
    `payments    captured ${report.money.captured} · holds voided ${report.money.voided} (free) · refunded ${report.money.refunded} (captured, then undone)`,
    `replays     served by Stripe ${report.replays.servedByStripe} · served by Postgres without Stripe ${postgres.authorizations + postgres.captures + postgres.voids + postgres.refunds} (authorizations ${postgres.authorizations}, captures ${postgres.captures}, voids ${postgres.voids}, refunds ${postgres.refunds}) · Stripe requests ${report.stripeRequests}`,
    `workers     ${report.workers.started} processes started${report.workers.unexpectedExits > 0 ? ` · ${report.workers.unexpectedExits} exited unexpectedly` : ''}`,
    `violations  ${report.violations.length === 0 ? 'none' : String(report.violations.length)}`,
  ];
  for (const exit of report.workers.exits.slice(0, 5)) {
    lines.push(`  worker ${exit.slot} (process ${exit.generation}) ended by ${exit.how}: ${exit.lastLines.slice(-3).join(' | ').slice(0, 400)}`);
  }
  const refused = report.resets.find((reset) => !reset.ok);
  if (refused) lines.push(`  a refused reset: ${refused.workflowId} (${refused.type}): ${(refused.error ?? '').split('\n')[0] ?? ''}`);
  for (const violation of report.violations.slice(0, 20)) lines.push(`  ${violation.invariant} ${violation.orderId}: ${violation.message}`);
  if (report.unfinished.length > 0) {
    lines.push(`unfinished  ${report.unfinished.length}: ${report.unfinished.slice(0, 10).map((u) => `${u.orderId} (${u.status})`).join(', ')}`);
  }
  if (report.logDir) lines.push(`worker logs ${report.logDir}`);
  lines.push(report.ok ? 'result      PASS' : 'result      FAIL');
  return lines.join('\n');
}

function rank(outcome: string): number {
  const index = OUTCOME_ORDER.indexOf(outcome);
  return index === -1 ? OUTCOME_ORDER.length : index;
}
