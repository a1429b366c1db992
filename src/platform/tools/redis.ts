/**
 * Finds, or installs from Debian's archive, the redis-server the rate-limit tests start (one of
 * their own per test file, so a test can stop it: a Redis outage on cue). Looked for the way
 * Chromium and promtool are: REDIS_SERVER_BIN, else `redis-server` on PATH, else Debian's
 * /usr/bin/redis-server, else Debian's package as root on Debian (its service kept off), else a
 * one-line error naming the command. A machine with nothing listening on 6379 needs nothing else.
 */
import path from 'node:path';
import { execa } from 'execa';
import { explicitBinary, installFromDebian, runAptGet, withServiceStartsDenied, type AptGet, type DebianTool, type DebianToolLookup } from './debian-tool.js';
import { isExecutable } from './find-binary.js';

export const DEBIAN_REDIS_SERVER = '/usr/bin/redis-server';
export const REDIS_INSTALL_LINE = "installing Debian's redis-server for the rate-limit tests (once)";

const REDIS: DebianTool = {
  name: 'redis-server',
  neededBy: 'the rate-limit tests',
  envVar: 'REDIS_SERVER_BIN',
  binaryKind: 'a redis-server binary',
  debianPackage: 'redis-server',
  installOptions: ['--no-install-recommends'],
  installLine: REDIS_INSTALL_LINE,
};

/** `apt-get`, with the package's server kept off now and at boot: the tests start their own. */
const aptGetServerOff: AptGet = async (args) => {
  if (args[0] !== 'install') return runAptGet(args);
  await withServiceStartsDenied(() => runAptGet(args));
  await execa('update-rc.d', ['redis-server', 'disable'], { stdio: ['ignore', 'pipe', 'pipe'], reject: false });
};

/** redis-server: REDIS_SERVER_BIN, else PATH, else Debian's, else installed as root on Debian, else a one-line BootstrapError. */
export async function ensureRedisServer(lookup: DebianToolLookup): Promise<string> {
  const env = lookup.env ?? process.env;
  const explicit = explicitBinary(REDIS, env);
  if (explicit) return explicit;
  const onPath = (env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, 'redis-server'));
  const systemPaths = lookup.systemPaths ?? [DEBIAN_REDIS_SERVER];
  const found = [...(lookup.systemPaths ? [] : onPath), ...systemPaths].find(isExecutable);
  if (found) return found;
  return installFromDebian(REDIS, systemPaths, lookup, aptGetServerOff);
}
