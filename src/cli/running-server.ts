import type { Config } from '../config';
import { DomainError, ErrorCode } from '../errors';
import { dataFolderHolder } from '../store/data-lock';

/**
 * The CLI beside a running `dhr serve` on the embedded store: PGlite admits one
 * process, so while the server holds DATA_DIR the read-only commands ask it over GraphQL (its
 * URL is in the folder's lock, store/data-lock.ts) and the others are refused with what to do.
 * A PostgreSQL store (DATABASE_URL) has no lock: every command opens it as before.
 */
export interface ServedStore {
  url: string;
  pid: number;
  dataDir: string;
}

/** The server holding the embedded store, when one holds it and has said where it listens. */
export function servedStore(config: Config): ServedStore | undefined {
  if (config.databaseUrl) return undefined;
  const holder = dataFolderHolder(config.dataDir);
  if (!holder || typeof holder.server !== 'object') return undefined;
  return { url: holder.server.url, pid: holder.pid, dataDir: config.dataDir };
}

const heldBy = (s: ServedStore) => `the store in ${s.dataDir} is held by the server at ${s.url} (pid ${s.pid})`;

/**
 * The server holding the store, for a read-only command that asks it (cli/transport.ts chooses
 * when): said on stderr, its refusals restated (a key it needs, a server that stopped answering);
 * undefined when none holds it. `role`: the key the command needs from a server that is not public.
 */
export function servedTarget(
  config: Config,
  key: string | undefined,
  command: string,
  role: 'reader' | 'admin',
): { url: string; apiKey?: string; explain: (error: DomainError) => DomainError } | undefined {
  const served = servedStore(config);
  if (!served) return undefined;
  console.error(`${heldBy(served)}: asking it`);
  return { url: served.url, apiKey: key, explain: (error) => explainServedRefusal(error, served, command, role, key !== undefined) };
}

/** A refusal of the server the CLI found by itself, said in terms of what to do. */
function explainServedRefusal(error: DomainError, served: ServedStore, command: string, role: 'reader' | 'admin', keyGiven: boolean): DomainError {
  if (error.code === ErrorCode.SERVICE_UNAVAILABLE && error.message.startsWith('cannot reach')) {
    return new DomainError(
      error.code,
      `${heldBy(served)}, which does not answer (${error.message}); if it is stuck, stop it (Ctrl-C, or kill ${served.pid}) and run the command again`,
    );
  }
  if (keyGiven || (error.code !== ErrorCode.UNAUTHENTICATED && error.code !== ErrorCode.FORBIDDEN)) return error;
  const need = role === 'admin' ? `\`dhr ${command}\` through it needs an admin key` : 'it answers only requests with an API key (READ_ACCESS=key)';
  const reader = role === 'reader' ? ` (a reader key will do: \`dhr keys create --role reader --url ${served.url} --key <admin key>\`)` : '';
  return new DomainError(
    error.code,
    `${heldBy(served)}, and ${need}; none is configured: set DHR_API_KEY or pass --key${reader}. The server said: ${error.message}`,
  );
}

/**
 * A command that opens the store itself (writes, and reads without a remote form) while the
 * server holds it: refused at once (before PGlite loads) with the server's address and what to
 * do; exit code 1. Undefined when no server holds the store. `form`: where the command takes
 * --url, its operands as the hint names them (cli/program.ts keeps them with each command).
 */
export function refuseWhileServed(config: Config, command: string, form?: string): number | undefined {
  const served = servedStore(config);
  if (!served) return undefined;
  const how =
    form !== undefined
      ? `Send it to the server with an admin key: ${['dhr', command, form, '--url', served.url].filter(Boolean).join(' ')} --key <admin key> (or set DHR_API_KEY; \`npm start\` prints a demo admin key), or stop the server (Ctrl-C) and run it again.`
      : command === 'serve'
        ? 'Stop it first (Ctrl-C), or give this one another DATA_DIR.'
        : `\`dhr ${command}\` has no --url form: stop the server (Ctrl-C) and run it again, or use the server's GraphQL API (GraphiQL: ${new URL('graphiql', served.url).href}; changes need an admin key).`;
  console.error(`dhr ${command}: ${heldBy(served)}; an embedded store admits one process. ${how}`);
  return 1;
}
