import { existsSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { DomainError, ErrorCode } from '../errors';

/** The lock's name inside the data folder (a directory: mkdir is atomic on every file system). */
export const LOCK_NAME = 'dhr.lock';
/**
 * A lock not refreshed for this long belongs to a process that died (kill -9, power loss) and is
 * taken over. The holder refreshes it every half of that; an event loop blocked longer than this
 * would let another process in, which no statement of ours comes near.
 */
export const LOCK_STALE_MS = 10_000;

/** Data folders (real paths) this process holds. */
const heldHere = new Set<string>();

/**
 * `dhr.lock.owner`: who holds the folder. `server` is written by `dhr serve` only: 'starting'
 * once its store is open, then the GraphQL URL it answers at once it listens, removed as it
 * begins to shut down; the CLI's read-only commands ask that server instead of the folder.
 */
export interface LockOwner {
  pid: number;
  host: string;
  server?: 'starting' | { url: string };
}

const ownerPathOf = (dataDir: string) => `${join(dataDir, LOCK_NAME)}.owner`;

/** Written under another name, then renamed: a reader never sees half a record. */
function writeOwner(ownerPath: string, owner: LockOwner): void {
  const temporary = `${ownerPath}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(owner));
  renameSync(temporary, ownerPath);
}

function readOwner(ownerPath: string): Partial<LockOwner> | undefined {
  try {
    const owner = JSON.parse(readFileSync(ownerPath, 'utf8')) as unknown;
    return owner !== null && typeof owner === 'object' ? (owner as Partial<LockOwner>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records in the lock of a folder this process holds what its server is doing: 'starting', or
 * the URL it answers at. Returns the function that takes the record back (the lock stays).
 */
export function recordServer(dataDir: string, server: NonNullable<LockOwner['server']>): () => void {
  if (!heldHere.has(realpathSync(dataDir))) throw new Error(`recordServer: this process does not hold ${dataDir}`);
  const ownerPath = ownerPathOf(dataDir);
  writeOwner(ownerPath, { pid: process.pid, host: hostname(), server });
  return () => {
    // Only while still held: after the release the owner file belongs to the next holder.
    if (heldHere.has(realpathSync(dataDir))) writeOwner(ownerPath, { pid: process.pid, host: hostname() });
  };
}

/**
 * The live process holding the folder, or undefined when none does: no lock, a lock whose
 * recorded owner was a process of this host that has exited, or one of another host (or of no
 * recorded owner) gone stale (the next open takes those over). An owner on another host is
 * returned without its server (its URL is that host's).
 */
export function dataFolderHolder(dataDir: string): LockOwner | undefined {
  const lockPath = join(dataDir, LOCK_NAME);
  if (!existsSync(lockPath)) return undefined;
  const ownerPath = ownerPathOf(dataDir);
  const owner = readOwner(ownerPath);
  const local = typeof owner?.pid === 'number' && owner.host === hostname();
  if (local) {
    // A live process of this host holds it, even if a busy event loop let the lock's time lag.
    if (ownerIsGone(dataDir, ownerPath)) return undefined;
  } else {
    try {
      if (!lockfile.checkSync(dataDir, { lockfilePath: lockPath, stale: LOCK_STALE_MS })) return undefined;
    } catch {
      return undefined;
    }
  }
  if (typeof owner?.pid !== 'number' || typeof owner.host !== 'string') return { pid: 0, host: '' };
  const { server } = owner;
  const known = server === 'starting' || (typeof server === 'object' && server !== null && typeof server.url === 'string');
  return { pid: owner.pid, host: owner.host, ...(known && local ? { server } : {}) };
}

/** Who holds the folder, as a refusal says it. */
function describeHolder(owner: LockOwner | undefined): string {
  if (!owner || owner.pid === 0) return 'another dhr process';
  const where = owner.host === hostname() ? `pid ${owner.pid}` : `pid ${owner.pid} on ${owner.host}`;
  if (owner.server === 'starting') return `the dhr server (${where}), which is still starting`;
  if (owner.server) return `the dhr server at ${owner.server.url} (${where})`;
  return `another dhr process (${where})`;
}

/**
 * Holds the embedded database's folder for this process: PGlite is one process's database, and
 * a second process writing the same files would corrupt them. proper-lockfile takes the lock
 * (mkdir), refreshes its mtime while held, takes over a stale one and removes it on exit. Next
 * to it, `dhr.lock.owner` records pid and host, so the lock of a process of this host that died
 * is taken over at once instead of after LOCK_STALE_MS. Returns the release function.
 */
export async function lockDataFolder(dataDir: string, log: (message: string) => void = (m) => console.error(m)): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, LOCK_NAME);
  const ownerPath = ownerPathOf(dataDir);
  const take = async () => {
    const release = await lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      stale: LOCK_STALE_MS,
      // Losing the lock (its folder removed by hand, a clock jump) must not crash a serving process.
      onCompromised: (error) => log(`the lock on ${dataDir} was lost (${error.message}); another process may open the folder now`),
    });
    writeOwner(ownerPath, { pid: process.pid, host: hostname() });
    const real = realpathSync(dataDir);
    heldHere.add(real);
    return async () => {
      heldHere.delete(real);
      rmSync(ownerPath, { force: true });
      await release();
    };
  };
  try {
    try {
      return await take();
    } catch (error) {
      if ((error as { code?: string }).code !== 'ELOCKED' || !ownerIsGone(dataDir, ownerPath)) throw error;
      // A process on this host that no longer exists (SIGKILL, crash): its lock is taken over now
      // rather than once it has gone stale, so a supervisor restarting the server at once succeeds.
      rmSync(lockPath, { recursive: true, force: true });
      return await take();
    }
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED') throw error;
    const holder = dataFolderHolder(dataDir);
    const what =
      holder?.server === 'starting'
        ? 'Run this command again once the server prints its URL (read-only commands then ask it), or stop the server first (Ctrl-C or SIGTERM). '
        : `Stop that process first (for the server: Ctrl-C or SIGTERM), or, while the server runs, send this command to it with \`--url ${typeof holder?.server === 'object' ? holder.server.url : '<server address>'}\` (an admin key for changes: --key or DHR_API_KEY). `;
    throw new DomainError(
      ErrorCode.CONFLICT,
      `the data folder ${dataDir} is in use by ${describeHolder(holder)} (it holds ${lockPath}). ` +
        what +
        `A lock left behind by a process that was killed is taken over at once on this machine (from another machine sharing the folder: ${LOCK_STALE_MS / 1000} s after it stopped).`,
      { argument: 'DATA_DIR' },
    );
  }
}

/**
 * Whether the lock's owner, as recorded next to it, was a process of this host that has exited.
 * proper-lockfile alone only knows a lock is abandoned once it has gone stale; this check is
 * ours. Unknown owner, another host, or a live pid (perhaps reused): not gone, the staleness
 * rule applies.
 */
function ownerIsGone(dataDir: string, ownerPath: string): boolean {
  // This process holding the folder itself is a second open in one process: refused, never taken over.
  if (heldHere.has(realpathSync(dataDir))) return false;
  const owner = readOwner(ownerPath);
  if (!owner) return false;
  if (typeof owner.pid !== 'number' || owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
