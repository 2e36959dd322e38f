import { Pool, type PoolClient, type PoolConfig } from 'pg';

/**
 * A wait for a pooled connection that timed out while every connection was checked out. No `code`
 * on purpose: Prisma turns an error with a string code into its own PrismaClientKnownRequestError,
 * and passes one without on unchanged (faults.ts classifies it as 'busy').
 */
export class PoolBusyError extends Error {
  override readonly name = 'PoolBusyError';
}

type ConnectCallback = (error: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * pg's Pool, whose wait for a connection tells "busy" from "down". pg-pool says "timeout exceeded
 * when trying to connect" both when the database does not answer and when every connection stayed
 * checked out for connectionTimeoutMillis. The second is this server being busy, not the database
 * being down: a PoolBusyError, which the API answers with OVERLOADED (HTTP 503, Retry-After) for
 * clients to retry, instead of SERVICE_UNAVAILABLE "the database is unavailable". In the pool
 * itself, not around our calls, so pool.query (which connects through the callback form) and
 * Prisma's driver adapter (which is handed this pool) both get it.
 */
export class BusyAwarePool extends Pool {
  /** Connections checked out now (the pool counts only open and idle ones). */
  private acquired = 0;

  constructor(config: PoolConfig) {
    super(config);
    this.on('acquire', () => this.acquired++);
    this.on('release', () => this.acquired--);
  }

  override connect(): Promise<PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<PoolClient> | void {
    if (callback) return super.connect((error, client, done) => callback(error ? this.busyOr(error) : error, client, done));
    return super.connect().catch((error: unknown) => {
      throw this.busyOr(error);
    });
  }

  private busyOr(error: unknown): Error {
    const max = this.options.max ?? 10;
    if (error instanceof Error && /timeout exceeded when trying to connect/i.test(error.message) && this.acquired >= max) {
      return new PoolBusyError(`the server is busy: all ${max} database connections (DB_POOL_MAX) stayed in use while this request waited; retry shortly`);
    }
    return error as Error;
  }
}
