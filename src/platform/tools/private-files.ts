// Files that hold secrets (the stack's state, generated passwords and NATS keys) and the folders
// the bootstrap reuses: written 0600 in folders only their owner may write, and refused when a
// reused folder belongs to someone else or is writable by others.
import { chmod, lstat, mkdir, open, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BootstrapError } from './bootstrap-error.js';

const OTHERS_MAY_WRITE = 0o022;

/**
 * Refuses a folder the bootstrap is about to reuse (run binaries from, keep a cluster in) unless
 * it is a real folder (not a symlink someone planted) owned by this process's user and writable
 * by nobody else: in a shared folder such as /tmp, anyone may create the name first.
 */
export async function assertOwnedPrivateDir(dir: string, what: string, owner: number = os.userInfo().uid): Promise<void> {
  const stats = await lstat(dir);
  const problem = !stats.isDirectory()
    ? 'is not a folder (a symlink or a file stands in its place)'
    : stats.uid !== owner
      ? `belongs to uid ${stats.uid}, not to uid ${owner}`
      : (stats.mode & OTHERS_MAY_WRITE) !== 0
        ? `may be written by others (mode ${(stats.mode & 0o777).toString(8)})`
        : null;
  if (problem) throw new BootstrapError(`refusing to use ${dir} for ${what}: it ${problem}; remove it (or fix its owner and mode) and run again`);
}

/** Creates `dir` (and its parents) if missing, 0700, and checks that it is this user's alone. */
export async function ensurePrivateDir(dir: string, what: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await assertOwnedPrivateDir(dir, what);
  await chmod(dir, 0o700);
}

/**
 * Writes `content` to `file` readable and writable by its owner only (0600), atomically: a temporary
 * file created 0600 with O_EXCL (never through a planted symlink), then renamed over the old one.
 * A file that existed with a wider mode is replaced, not chmod-ed in place.
 */
export async function writePrivateFile(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.chmod(0o600);
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** Whether `file` may be read only by its owner (no group or other bits), and is a regular file. */
export async function isPrivateFile(file: string): Promise<boolean> {
  try {
    const stats = await lstat(file);
    return stats.isFile() && (stats.mode & 0o077) === 0 && stats.uid === os.userInfo().uid;
  } catch {
    return false;
  }
}
