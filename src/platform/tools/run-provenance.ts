/**
 * Where a measurement came from, for the result files `npm run bench` and `npm run soak` write:
 * the commit it ran at and the machine it ran on, so a figure quoted in the README can be traced.
 */
import os from 'node:os';
import { execa } from 'execa';

/** The short commit of `root`'s checkout, with `-dirty` when tracked files differ; `nogit` outside git. */
export async function gitCommit(root: string): Promise<string> {
  const head = await execa('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, reject: false });
  if (head.exitCode !== 0) return 'nogit';
  const dirty = await execa('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, reject: false });
  return `${head.stdout.trim()}${dirty.stdout.trim() === '' ? '' : '-dirty'}`;
}

export interface MachineDescription {
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  os: string;
  node: string;
}

/** The cores, memory, kernel and Node.js this process runs on. */
export function describeMachine(): MachineDescription {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    node: process.versions.node,
  };
}
