/** Finds, or installs from Debian's archive, the Chromium the browser test drives (src/platform/tools/debian-tool.ts installs). */
import { explicitBinary, installFromDebian, type DebianTool, type DebianToolLookup } from './debian-tool.js';
import { isExecutable } from './find-binary.js';

/** Debian's `chromium` package: what CI installs and what the browser test drives by default. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** Where Google's Chrome package puts its binary (playwright-core's `chrome` channel on Linux). */
const GOOGLE_CHROME = '/opt/google/chrome/chrome';
export const CHROMIUM_INSTALL_LINE = "installing Debian's chromium (once)";

export type ChromiumLookup = DebianToolLookup;

const CHROMIUM: DebianTool = {
  name: 'Chromium',
  neededBy: 'the browser test',
  envVar: 'CHROMIUM_PATH',
  binaryKind: 'a Chrome or Chromium binary',
  debianPackage: 'chromium',
  installOptions: [],
  installLine: CHROMIUM_INSTALL_LINE,
};

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

/**
 * The browser for the Web UI test: CHROMIUM_PATH, else Debian's /usr/bin/chromium, else a Chrome
 * that playwright-core can find. With none, as root on Debian, Debian's package is installed
 * (saying so in one line); otherwise a BootstrapError names the command to run.
 */
export async function ensureChromium(lookup: ChromiumLookup): Promise<string> {
  const explicit = explicitBinary(CHROMIUM, lookup.env ?? process.env);
  if (explicit) return explicit;
  const systemPaths = lookup.systemPaths ?? [DEBIAN_CHROMIUM, GOOGLE_CHROME];
  const found = systemPaths.find(isExecutable) ?? (lookup.systemPaths ? null : await playwrightsOwn());
  if (found) return found;
  return installFromDebian(CHROMIUM, systemPaths, lookup);
}
