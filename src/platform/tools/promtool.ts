/**
 * Finds, or installs from Debian's archive, the promtool that checks ops/prometheus and runs a
 * unit test per alert (test/ops/ops-metrics.test.ts). Debian ships promtool in its `prometheus`
 * package, whose postinst would start a Prometheus server on :9090 and enable it at boot: the
 * install denies that start and leaves the service disabled, so only the binary is gained.
 */
import { execa } from 'execa';
import { explicitBinary, installFromDebian, runAptGet, withServiceStartsDenied, type AptGet, type DebianTool, type DebianToolLookup } from './debian-tool.js';
import { isExecutable } from './find-binary.js';

/** Where Debian's `prometheus` package puts promtool. */
export const DEBIAN_PROMTOOL = '/usr/bin/promtool';
export const PROMTOOL_INSTALL_LINE = "installing Debian's prometheus for promtool (once)";

export type PromtoolLookup = DebianToolLookup;

const PROMTOOL: DebianTool = {
  name: 'promtool',
  neededBy: 'the alert rules test',
  envVar: 'PROMTOOL_PATH',
  binaryKind: 'a promtool binary',
  debianPackage: 'prometheus',
  installOptions: ['--no-install-recommends'],
  installLine: PROMTOOL_INSTALL_LINE,
};

/**
 * `apt-get`, with the package's server kept off: nothing starts while it installs (policy-rc.d),
 * and its init script and systemd unit are disabled afterwards, so no boot starts it either.
 */
const aptGetServerOff: AptGet = async (args) => {
  if (args[0] !== 'install') return runAptGet(args);
  await withServiceStartsDenied(() => runAptGet(args));
  // update-rc.d disables the systemd unit as well, where systemctl is installed.
  await execa('update-rc.d', ['prometheus', 'disable'], { stdio: ['ignore', 'pipe', 'pipe'] });
};

/**
 * promtool: PROMTOOL_PATH, else Debian's /usr/bin/promtool. With neither, as root on Debian,
 * Debian's `prometheus` package is installed without its recommends (saying so in one line);
 * otherwise a BootstrapError names the command to run.
 */
export async function ensurePromtool(lookup: PromtoolLookup): Promise<string> {
  const explicit = explicitBinary(PROMTOOL, lookup.env ?? process.env);
  if (explicit) return explicit;
  const systemPaths = lookup.systemPaths ?? [DEBIAN_PROMTOOL];
  const found = systemPaths.find(isExecutable);
  if (found) return found;
  return installFromDebian(PROMTOOL, systemPaths, lookup, aptGetServerOff);
}
