/**
 * What the tools the tests take from Debian's archive (Chromium, promtool) share: the variable
 * that names the binary, and the one-time `apt-get install` as root on Debian with its one line
 * and its one-line errors. src/platform/tools/chromium.ts and src/platform/tools/promtool.ts say where to look.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { execa } from 'execa';
import { BootstrapError } from './bootstrap-error.js';
import { isExecutable } from './find-binary.js';

/** Runs `apt-get` with these arguments. */
export type AptGet = (args: string[]) => Promise<void>;

export interface DebianToolLookup {
  env?: NodeJS.ProcessEnv;
  /** The system paths tried after the tool's variable, in order. */
  systemPaths?: string[];
  /** Whether this process may install Debian's package (root on Debian). */
  canInstall?: boolean;
  aptGet?: AptGet;
  say: (line: string) => void;
}

export interface DebianTool {
  /** How the messages name it: `Chromium`, `promtool`. */
  name: string;
  /** What needs it: `the browser test`. */
  neededBy: string;
  /** The variable that names the binary explicitly: `CHROMIUM_PATH`. */
  envVar: string;
  /** What that variable must point at: `a Chrome or Chromium binary`. */
  binaryKind: string;
  debianPackage: string;
  /** `apt-get install` options besides `-y -qq`. */
  installOptions: string[];
  /** The one line said before installing. */
  installLine: string;
}

/** The binary the tool's variable names, or null when it is unset; a BootstrapError when it is not executable. */
export function explicitBinary(tool: DebianTool, env: NodeJS.ProcessEnv): string | null {
  const explicit = env[tool.envVar]?.trim();
  if (!explicit) return null;
  if (!isExecutable(explicit)) throw new BootstrapError(`${tool.envVar}=${explicit} is not an executable file: point it at ${tool.binaryKind}, or unset it`);
  return explicit;
}

/** How long an install waits for another apt-get to release dpkg's lock. */
const APT_LOCK_TIMEOUT_SECONDS = 300;

/** apt's own last error line (E: ...) when it printed one, else the command's one-line failure. */
function aptFailure(error: unknown): string {
  const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String((error as { stderr: unknown }).stderr) : '';
  const aptError = stderr.split('\n').filter((line) => line.startsWith('E:')).at(-1);
  if (aptError) return aptError;
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
}

/**
 * `apt-get` as Debian's archive is used unattended. Another apt-get (a second test run, unattended
 * upgrades) may hold dpkg's lock for a while: wait for it rather than fail with apt's exit code 100.
 */
export const runAptGet: AptGet = async (args) => {
  await execa('apt-get', ['-o', `DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT_SECONDS}`, ...args], { env: { DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'pipe', 'pipe'] });
};

/**
 * Installs the tool's package when this process may (root on Debian, saying so in one line) and
 * returns the first of `systemPaths` it then finds; otherwise a BootstrapError of one line names
 * the command to run.
 */
export async function installFromDebian(tool: DebianTool, systemPaths: string[], lookup: DebianToolLookup, defaultAptGet: AptGet = runAptGet): Promise<string> {
  const canInstall = lookup.canInstall ?? (os.userInfo().uid === 0 && existsSync('/etc/debian_version'));
  const packageArgs = [...tool.installOptions, tool.debianPackage];
  const installCommand = `apt-get install ${packageArgs.join(' ')}`;
  if (!canInstall) {
    throw new BootstrapError(`no ${tool.name} for ${tool.neededBy}: install it (Debian: sudo ${installCommand}), or set ${tool.envVar} to ${tool.binaryKind}`);
  }
  lookup.say(tool.installLine);
  const run = lookup.aptGet ?? defaultAptGet;
  try {
    await run(['update', '-qq']);
    await run(['install', '-y', '-qq', ...packageArgs]);
  } catch (error) {
    const why = aptFailure(error);
    throw new BootstrapError(`could not install Debian's ${tool.debianPackage} (${why}): run '${installCommand}', or set ${tool.envVar}`);
  }
  const installed = systemPaths.find(isExecutable);
  if (!installed) throw new BootstrapError(`apt-get installed ${tool.debianPackage} but there is no ${systemPaths[0] ?? 'binary'}: set ${tool.envVar} to its binary`);
  return installed;
}

/** Where invoke-rc.d and deb-systemd-invoke ask whether a package's script may start its service. */
export const POLICY_RC_D = '/usr/sbin/policy-rc.d';
const DENY_STARTS = `#!/bin/sh
# Written by the order-payments test setup while apt-get installs a package for one of its tools
# (src/platform/tools/debian-tool.ts); it removes this file afterwards, and so may you.
exit 101
`;

/**
 * Runs `work` (an `apt-get install`) with every service start denied through Debian's
 * policy-rc.d (exit 101), so a package whose postinst starts its server leaves none running,
 * under sysvinit or systemd alike. A policy-rc.d that is already there is the machine's own rule
 * (Docker's Debian images ship one that denies every start) and is left as it is.
 */
export async function withServiceStartsDenied<T>(work: () => Promise<T>, policyFile: string = POLICY_RC_D): Promise<T> {
  try {
    await writeFile(policyFile, DENY_STARTS, { mode: 0o755, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return work();
    throw error;
  }
  try {
    return await work();
  } finally {
    await rm(policyFile, { force: true });
  }
}
