// The soak's report for a terminal or a CI log: its time series as a compact table, what the chaos
// did, and one verdict line per target.
import type { SoakSummary } from './soak.js';

const COLUMNS: { title: string; width: number; cell: (sample: SoakSummary['samples'][number]) => string }[] = [
  { title: 't s', width: 7, cell: (s) => s.atSeconds.toFixed(0) },
  { title: 'phase', width: 6, cell: (s) => s.phase },
  { title: 'orders/s', width: 8, cell: (s) => s.ordersPerSecond.toFixed(1) },
  { title: 'ended', width: 6, cell: (s) => String(s.ordersEnded) },
  { title: 'RSS MB all', width: 10, cell: (s) => `${s.workerRssMb.toFixed(0)} (${s.workerProcesses})` },
  { title: 'long-lived', width: 10, cell: (s) => (s.longLivedRssMb === null ? '–' : s.longLivedRssMb.toFixed(0)) },
  { title: 'lag s', width: 6, cell: (s) => s.outboxLagSeconds.toFixed(1) },
  { title: 'unsent', width: 6, cell: (s) => String(s.outboxUnsent) },
  { title: 'activity_idem', width: 13, cell: (s) => String(s.rows.activity_idempotency) },
  { title: 'outbox', width: 7, cell: (s) => String(s.rows.outbox) },
  { title: 'inbox', width: 7, cell: (s) => String(s.rows.processed_messages) },
  { title: 'api_idem', width: 8, cell: (s) => String(s.rows.api_idempotency) },
];

export function formatSoakSummary(summary: SoakSummary): string {
  const o = summary.options;
  const c = summary.chaos;
  const f = c.faults;
  const row = (cells: string[]) => cells.map((cell, i) => cell.padStart(COLUMNS[i]?.width ?? 0)).join('  ');
  const outcomes = Object.entries(c.outcomes)
    .map(([outcome, count]) => `${outcome} ${count}`)
    .join(' · ');
  const lines = [
    `soak: ${o.orders} orders at ${o.ratePerSecond}/s for ${summary.seconds.load} s (then a drain), seed ${o.seed}; ${summary.seconds.total} s in all`,
    `  retention horizons ${o.retentionSeconds} s, reaper every ${o.reapEverySeconds} s; a worker killed every ${o.killEveryMs[0] / 1000}-${o.killEveryMs[1] / 1000} s (slot 1; slot 0 is the long-lived worker)`,
    '',
    row(COLUMNS.map((column) => column.title)),
    ...summary.samples.map((sample) => row(COLUMNS.map((column) => column.cell(sample)))),
    '',
    `orders      ${outcomes}`,
    `faults      Stripe responses dropped ${f.responsesDropped} · 500s ${f.failed500} · 429s ${f.failed429} · delayed ${f.delayed} · workers SIGKILLed ${f.workerKills} · Postgres backends terminated ${f.backendTerminations} · workflow resets ${f.resets} of ${f.resetsPlanned}${f.resetsFailed > 0 ? ` (+${f.resetsFailed} refused)` : ''}`,
    `workers     ${c.workers.started} processes started${c.workers.unexpectedExits > 0 ? ` · ${c.workers.unexpectedExits} exited unexpectedly` : ''}`,
  ];
  for (const violation of c.violations.slice(0, 20)) lines.push(`  ${violation.invariant} ${violation.orderId}: ${violation.message}`);
  for (const verdict of Object.values(summary.verdicts)) {
    const mark = verdict.met === null ? 'not judged' : verdict.met ? 'met' : 'MISSED';
    lines.push(`target      ${verdict.target}: ${mark} (${verdict.measured})`);
  }
  if (c.logDir) lines.push(`logs        ${c.logDir}`);
  lines.push(summary.ok ? 'result      PASS' : 'result      FAIL');
  return lines.join('\n');
}
