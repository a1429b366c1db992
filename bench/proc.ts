/**
 * The process table as /proc shows it: each process's command, parent, group, RSS and CPU so far.
 * The bench's measurements of process trees (production-worker.ts) and of the whole machine
 * (machine-cpu.ts) read it from here. Linux only.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second in /proc's CPU times (USER_HZ: 100 on every Linux kernel the project runs on). */
export const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Process group. */
  pgrp: number;
  /** The command name from /proc/<pid>/stat (what ps shows as comm). */
  comm: string;
  /** /proc/<pid>/cmdline, its arguments joined by spaces. */
  cmdline: string;
  rssBytes: number;
  /** User plus system CPU, in clock ticks. */
  cpuTicks: number;
}

/** Every process this user may read, as /proc shows them now. */
export async function readProcesses(): Promise<ProcessInfo[]> {
  const entries = await readdir('/proc');
  const all = await Promise.all(entries.filter((name) => /^\d+$/.test(name)).map((name) => readProcess(Number(name))));
  return all.filter((info): info is ProcessInfo => info !== null);
}

async function readProcess(pid: number): Promise<ProcessInfo | null> {
  try {
    const [stat, status, cmdline] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/cmdline`, 'utf8'),
    ]);
    // Fields after the command name, which is in parentheses and may hold spaces: state is 3,
    // ppid 4, pgrp 5, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const rssKb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return {
      pid,
      comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      cmdline: cmdline.split('\0').filter(Boolean).join(' '),
      rssBytes: Number(rssKb ?? 0) * 1024,
      cpuTicks: Number(fields[11]) + Number(fields[12]),
    };
  } catch {
    // It exited between the listing and the read, or is not ours to read.
    return null;
  }
}
