import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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
 * Holds the embedded database's folder for this process: PGlite is one process's database, and
 * a second process writing the same files would corrupt them. proper-lockfile takes the lock
 * (mkdir), refreshes its mtime while held, takes over a stale one and removes it on exit. Next
 * to it, `dhr.lock.owner` records pid and host, so the lock of a process of this host that died
 * is taken over at once instead of after LOCK_STALE_MS. Returns the release function.
 */
export async function lockDataFolder(dataDir: string, log: (message: string) => void = (m) => console.error(m)): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, LOCK_NAME);
  const ownerPath = `${lockPath}.owner`;
  const take = async () => {
    const release = await lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      stale: LOCK_STALE_MS,
      // Losing the lock (its folder removed by hand, a clock jump) must not crash a serving process.
      onCompromised: (error) => log(`the lock on ${dataDir} was lost (${error.message}); another process may open the folder now`),
    });
    writeFileSync(ownerPath, JSON.stringify({ pid: process.pid, host: hostname() }));
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
    throw new DomainError(
      ErrorCode.CONFLICT,
      `the data folder ${dataDir} is in use by another dhr process (it holds ${lockPath}). ` +
        'Stop that process first (for the server: Ctrl-C or SIGTERM), or, while the server runs, send this command to it with `--url <server address>`. ' +
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
  let owner: { pid?: unknown; host?: unknown };
  try {
    owner = JSON.parse(readFileSync(ownerPath, 'utf8')) as typeof owner;
  } catch {
    return false;
  }
  if (typeof owner.pid !== 'number' || owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
