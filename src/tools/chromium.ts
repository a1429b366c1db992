import { existsSync } from 'node:fs';
import os from 'node:os';
import { execa } from 'execa';
import { BootstrapError } from './bootstrap-error.js';
import { isExecutable } from './find-binary.js';

/** Debian's `chromium` package: what CI installs and what the browser test drives by default. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** Where Google's Chrome package puts its binary (playwright-core's `chrome` channel on Linux). */
const GOOGLE_CHROME = '/opt/google/chrome/chrome';
export const CHROMIUM_INSTALL_LINE = "installing Debian's chromium (once)";

export interface ChromiumLookup {
  env?: NodeJS.ProcessEnv;
  /** The system paths tried after CHROMIUM_PATH, in order. */
  systemPaths?: string[];
  /** Whether this process may install Debian's package (root on Debian). */
  canInstall?: boolean;
  /** Runs `apt-get` with these arguments. */
  aptGet?: (args: string[]) => Promise<void>;
  say: (line: string) => void;
}

/** The Chromium playwright-core downloaded for itself, if someone ran `npx playwright-core install`. */
async function playwrightsOwn(): Promise<string | null> {
  try {
    const { chromium } = await import('playwright-core');
    const file = chromium.executablePath();
    return file && isExecutable(file) ? file : null;
  } catch {
    return null;
  }
}

const aptGet = async (args: string[]) => {
  await execa('apt-get', args, { env: { DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'pipe', 'pipe'] });
};

/**
 * The browser for the Web UI test: CHROMIUM_PATH, else Debian's /usr/bin/chromium, else a Chrome
 * that playwright-core can find. With none, as root on Debian, Debian's package is installed
 * (saying so in one line); otherwise a BootstrapError names the command to run.
 */
export async function ensureChromium(lookup: ChromiumLookup): Promise<string> {
  const env = lookup.env ?? process.env;
  const explicit = env.CHROMIUM_PATH?.trim();
  if (explicit) {
    if (!isExecutable(explicit)) throw new BootstrapError(`CHROMIUM_PATH=${explicit} is not an executable file: point it at a Chrome or Chromium binary, or unset it`);
    return explicit;
  }
  const systemPaths = lookup.systemPaths ?? [DEBIAN_CHROMIUM, GOOGLE_CHROME];
  const found = systemPaths.find(isExecutable) ?? (lookup.systemPaths ? null : await playwrightsOwn());
  if (found) return found;

  const canInstall = lookup.canInstall ?? (os.userInfo().uid === 0 && existsSync('/etc/debian_version'));
  const installCommand = 'sudo apt-get install chromium';
  if (!canInstall) {
    throw new BootstrapError(
      `no Chromium for the browser test: install it (Debian: ${installCommand}), or set CHROMIUM_PATH to a Chrome or Chromium binary`,
    );
  }
  lookup.say(CHROMIUM_INSTALL_LINE);
  const run = lookup.aptGet ?? aptGet;
  try {
    await run(['update', '-qq']);
    await run(['install', '-y', '-qq', 'chromium']);
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new BootstrapError(`could not install Debian's chromium (${why}): run 'apt-get install chromium', or set CHROMIUM_PATH`);
  }
  const installed = systemPaths.find(isExecutable);
  if (!installed) throw new BootstrapError(`apt-get installed chromium but there is no ${systemPaths[0]}: set CHROMIUM_PATH to its binary`);
  return installed;
}
