/**
 * Reads a Prometheus text scrape in tests: the sum of one metric's samples whose labels include
 * the given ones. Only for assertions; every process writes its exposition through a library.
 */
export function sampleSum(scrape: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const sample of samples(scrape, name)) {
    if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) sum += sample.value;
  }
  return sum;
}

/** True when the scrape has at least one sample (or a HELP/TYPE line) of this metric. */
export function hasMetric(scrape: string, name: string): boolean {
  return scrape.split('\n').some((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `) || line.startsWith(`# TYPE ${name} `));
}

export function samples(scrape: string, name: string): { labels: Record<string, string>; value: number }[] {
  const found: { labels: Record<string, string>; value: number }[] = [];
  for (const line of scrape.split('\n')) {
    if (!(line.startsWith(`${name}{`) || line.startsWith(`${name} `))) continue;
    const match = /^[^{\s]+(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    found.push({ labels, value: Number(match[2]) });
  }
  return found;
}

export async function scrape(url: string): Promise<string> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return response.text();
}
