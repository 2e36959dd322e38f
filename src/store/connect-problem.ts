import { redactUrl } from './postgres';

/** Node's and PostgreSQL's codes for a connection that could not be opened, as a person would check them. */
const PROBLEMS: Record<string, (where: Where) => string> = {
  ENOTFOUND: (w) => `the host "${w.host}" was not found (ENOTFOUND); check the host name in DATABASE_URL`,
  EAI_AGAIN: (w) => `the host "${w.host}" could not be looked up (EAI_AGAIN); check the host name and the machine's DNS`,
  ECONNREFUSED: (w) => `nothing accepts connections on ${w.host}:${w.port} (ECONNREFUSED); check that PostgreSQL runs there and the port in DATABASE_URL`,
  ETIMEDOUT: (w) => `${w.host}:${w.port} did not answer (ETIMEDOUT); check the host, the port and any firewall between`,
  EHOSTUNREACH: (w) => `${w.host} cannot be reached (EHOSTUNREACH); check the host in DATABASE_URL and the network`,
  '28P01': (w) => `the server refused the password of user "${w.user}" (28P01); check the user and password in DATABASE_URL`,
  '28000': (w) => `the server refused user "${w.user}" (28000: no pg_hba.conf entry or no such role); check the user in DATABASE_URL and pg_hba.conf`,
  '3D000': (w) =>
    `the database "${w.database}" does not exist on ${w.host}:${w.port} (3D000); create it (createdb ${w.database}) or fix the name in DATABASE_URL`,
};
const TIMEOUT_MESSAGE = /timeout exceeded when trying to connect|connection timeout/i;

interface Where {
  host: string;
  port: string;
  user: string;
  database: string;
}

export class DatabaseConnectError extends Error {
  override readonly name = 'DatabaseConnectError';
}

/**
 * The one line a person needs when the first connection to DATABASE_URL fails at start: the
 * setting, where it points (password hidden) and what to check; undefined for any other error.
 */
export function explainConnectFailure(error: unknown, databaseUrl: string): DatabaseConnectError | undefined {
  const url = new URL(databaseUrl);
  const where: Where = {
    host: decodeURIComponent(url.hostname) || 'localhost',
    port: url.port || '5432',
    user: decodeURIComponent(url.username) || process.env.USER || 'postgres',
    database: decodeURIComponent(url.pathname.slice(1)) || decodeURIComponent(url.username) || 'postgres',
  };
  let problem: string | undefined;
  // The driver's error may come wrapped (migrate, Prisma): the first link of the chain that says what failed.
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && !problem && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && PROBLEMS[code]) problem = PROBLEMS[code](where);
    else if (e instanceof Error && TIMEOUT_MESSAGE.test(e.message)) {
      problem = `${where.host}:${where.port} did not answer within DB_CONNECT_TIMEOUT_MS; check the host, the port and any firewall between`;
    }
  }
  return problem ? new DatabaseConnectError(`cannot open the database of DATABASE_URL (${redactUrl(databaseUrl)}): ${problem}`, { cause: error }) : undefined;
}
