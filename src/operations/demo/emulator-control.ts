// Drives the Stripe emulator's fault rules over its HTTP control API, for a demo whose emulator
// may run in another process (npm run stack).
import type { FaultRule, FaultRuleInput } from '@order-payments/stripe-emulator';

/**
 * The Stripe emulator's control API over HTTP: the demo drives an emulator it may not own
 * (one started by `npm run stack` in another shell), so it uses the API, not the object.
 */
export class EmulatorControl {
  constructor(private readonly baseUrl: string) {}

  async addFault(rule: FaultRuleInput): Promise<FaultRule> {
    const response = await fetch(new URL('/_emulator/faults', this.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rule),
    });
    if (response.status !== 201) throw new Error(`the emulator refused fault ${JSON.stringify(rule)}: ${response.status} ${await response.text()}`);
    return (await response.json()) as FaultRule;
  }

  async faults(): Promise<FaultRule[]> {
    const response = await fetch(new URL('/_emulator/faults', this.baseUrl));
    if (!response.ok) throw new Error(`the emulator did not list its faults: ${response.status}`);
    return ((await response.json()) as { data: FaultRule[] }).data;
  }

  async removeFault(id: string): Promise<void> {
    await fetch(new URL(`/_emulator/faults/${encodeURIComponent(id)}`, this.baseUrl), { method: 'DELETE' });
  }
}
