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

/**
 * Holds the embedded database's folder for this process: PGlite is one process's database, and
 * a second process writing the same files would corrupt them. proper-lockfile takes the lock
 * (mkdir), refreshes its mtime while held, takes over a stale one and removes it on exit.
 * Returns the release function.
 */
export async function lockDataFolder(dataDir: string, log: (message: string) => void = (m) => console.error(m)): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, LOCK_NAME);
  try {
    return await lockfile.lock(dataDir, {
      lockfilePath: lockPath,
      stale: LOCK_STALE_MS,
      // Losing the lock (its folder removed by hand, a clock jump) must not crash a serving process.
      onCompromised: (error) => log(`the lock on ${dataDir} was lost (${error.message}); another process may open the folder now`),
    });
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED') throw error;
    throw new DomainError(
      ErrorCode.CONFLICT,
      `the data folder ${dataDir} is in use by another dhr process (it holds ${lockPath}). ` +
        'Stop that process first (for the server: Ctrl-C or SIGTERM), or, while the server runs, send this command to it with `--url <server address>`. ' +
        `A lock left behind by a process that was killed is taken over ${LOCK_STALE_MS / 1000} s after it stopped.`,
      { argument: 'DATA_DIR' },
    );
  }
}
