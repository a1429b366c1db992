// The chaos run's seeded Stripe emulator faults (dropped responses, 500s, 429s, latency), and the
// count of how often each fired.
import type { FaultRuleInput, StripeEmulator } from '@order-payments/stripe-emulator';

/**
 * The run's Stripe faults, each with its own seed derived from the run's so a run can be
 * replayed: 20% of writes commit and lose their response; 5% of requests fail before they
 * execute (half 500, half 429); and latency jitter on a share of the rest. Every rule covers every
 * endpoint (`/v1/**`): the authorization, the capture, the void (cancel) and the refund alike.
 */
export function stripeFaultRules(seed: number): FaultRuleInput[] {
  return [
    { kind: 'drop_response', method: 'POST', path: '/v1/**', probability: 0.2, seed },
    { kind: 'fail_before_execution', status: 500, path: '/v1/**', probability: 0.025, seed: seed + 1 },
    // Of the requests the 500 rule let through: still 2.5% of all.
    { kind: 'fail_before_execution', status: 429, path: '/v1/**', probability: 0.025 / 0.975, seed: seed + 2 },
    { kind: 'latency', latencyMs: 1_000, path: '/v1/**', probability: 0.02, seed: seed + 3 },
    { kind: 'latency', latencyMs: 200, path: '/v1/**', probability: 0.1, seed: seed + 4 },
    { kind: 'latency', latencyMs: 20, path: '/v1/**', probability: 0.3, seed: seed + 5 },
  ];
}

export function installStripeFaults(emulator: StripeEmulator, seed: number): void {
  for (const rule of stripeFaultRules(seed)) emulator.addFault(rule);
}

export interface StripeFaultCounts {
  responsesDropped: number;
  failed500: number;
  failed429: number;
  delayed: number;
}

/** What the emulator's fault rules did, by kind, read from the rules' own counts. */
export function stripeFaultCounts(emulator: StripeEmulator): StripeFaultCounts {
  const counts: StripeFaultCounts = { responsesDropped: 0, failed500: 0, failed429: 0, delayed: 0 };
  for (const rule of emulator.listFaults()) {
    if (rule.kind === 'drop_response') counts.responsesDropped += rule.fired;
    else if (rule.kind === 'fail_before_execution') {
      if (rule.status === 429) counts.failed429 += rule.fired;
      else counts.failed500 += rule.fired;
    } else if (rule.kind === 'latency') counts.delayed += rule.fired;
  }
  return counts;
}
