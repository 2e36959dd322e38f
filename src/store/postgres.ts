import { createHash } from 'node:crypto';
import { Client, types, type PoolClient } from 'pg';
import { BusyAwarePool } from './busy-pool';
import { guardPool } from './faults';
import { defaultSearchLimit, SearchGate } from './search-gate';
import { localSettingsStatement, settingsStatement, type Database, type Distribution, type PoolUsage, type Queryable } from './db';
import { DEFAULT_PREPARED_STATEMENTS, StatementCounter } from './statements';
import { createPrismaClient, type PrismaClient } from './prisma';
import { vectorBinary } from './vector';

// int8 (count(*), sums) as JS numbers: our counts stay far below 2^53.
types.setTypeParser(20, (v) => Number(v));

export interface PostgresOptions {
  url: string;
  maxConnections?: number;
  /** statement_timeout sent with every connection (0 or absent: none). */
  statementTimeoutMs?: number;
  /** How long opening a connection may take before the request fails (unreachable host). */
  connectTimeoutMs?: number;
  log?: (message: string) => void;
  /**
   * Search statements kept prepared per connection, at most (DB_PREPARED_STATEMENTS; 0: none).
   * Default 16.
   */
  preparedStatements?: number;
  /** Search statements (queryWithSettings) run at once, at most; default half the pool (search-gate.ts). */
  maxSearches?: number;
}

export class PostgresDatabase implements Database {
  readonly kind = 'postgres' as const;
  readonly statements = new StatementCounter();
  readonly location: string;
  distributed?: Distribution;
  readonly prisma: PrismaClient;
  private readonly pool: BusyAwarePool;
  /** Session settings each pooled connection last received (a new connection starts unknown). */
  private readonly applied = new WeakMap<PoolClient, string>();
  /** The search statements each pooled connection has prepared (queryWithSettings). */
  private readonly prepared = new WeakMap<PoolClient, Set<string>>();
  private readonly preparedStatements: number;
  /** The health checks' own connection (probe), opened on first use and again after it breaks. */
  private prober?: Promise<Client>;
  private readonly url: string;
  private readonly connectTimeoutMs: number;
  /** Search statements' admission (search-gate.ts). */
  private readonly searches: SearchGate;

  constructor(options: PostgresOptions) {
    const max = options.maxConnections ?? 10;
    this.pool = new BusyAwarePool({
      connectionString: options.url,
      max,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    });
    // A connection dropping (server restart), idle or in use, must not crash the process.
    guardPool(this.pool, options.log);
    this.location = redactUrl(options.url);
    this.url = options.url;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.preparedStatements = options.preparedStatements ?? DEFAULT_PREPARED_STATEMENTS;
    // A search waits for its turn as long as it would wait for a connection.
    this.searches = new SearchGate(options.maxSearches ?? defaultSearchLimit(max), this.connectTimeoutMs);
    this.prisma = createPrismaClient({ pool: this.pool }, this.statements);
  }

  poolUsage(): PoolUsage {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, max: this.pool.options.max };
  }

  async probe<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    this.prober ??= this.openProber();
    const client = await this.prober.catch((error: unknown) => {
      this.prober = undefined;
      throw error;
    });
    try {
      return (await client.query(sql, params as unknown[])).rows as T[];
    } catch (error) {
      // A broken connection is replaced on the next probe; an error of the statement keeps it.
      if (!(error as { code?: string }).code) {
        this.prober = undefined;
        client.end().catch(() => undefined);
      }
      throw error;
    }
  }

  private async openProber(): Promise<Client> {
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: this.connectTimeoutMs });
    // A dropped probe connection must not crash the process (as guardPool does for the pool's).
    client.on('error', () => {
      this.prober = undefined;
    });
    await client.connect();
    return client;
  }

  /** Binary: see vectorBinary for what it saves per query. */
  vectorParam(vector: Float32Array): Buffer {
    return vectorBinary(vector);
  }

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    this.statements.add();
    const result = await this.pool.query(sql, params as unknown[]);
    return result.rows as T[];
  }

  async exec(sql: string): Promise<void> {
    this.statements.add();
    await this.pool.query(sql);
  }

  /**
   * Search statements run as named prepared statements (one per statement text, up to
   * preparedStatements a connection; later texts run unnamed), planned afresh for every question
   * (plan_cache_mode force_custom_plan: a generic plan of these statements was slower and ranked
   * differently, bench at 100k). What it saves is parsing and analysing a statement of 8–9 kB
   * each time: the default mode's statement 17.90 → 16.79 ms p50 at 100k passages
   * (docs/benchmarks.md). Not on Citus, whose searches take the SET LOCAL path.
   */
  queryWithSettings<T>(settings: Record<string, string>, sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.searches.run(() => this.searchNow<T>(settings, sql, params));
  }

  private async searchNow<T>(settings: Record<string, string>, sql: string, params: readonly unknown[] = []): Promise<T[]> {
    if (this.distributed === 'citus' && Object.keys(settings).length > 0) return this.queryWithLocalSettings<T>(settings, sql, params);
    const prepare = this.preparedStatements > 0 && this.distributed !== 'citus';
    const effective = prepare ? { ...settings, plan_cache_mode: 'force_custom_plan' } : settings;
    const client = await this.pool.connect();
    try {
      const key = JSON.stringify(effective);
      if (Object.keys(effective).length > 0 && this.applied.get(client) !== key) {
        const set = settingsStatement(effective);
        this.statements.add();
        await client.query(set.sql, set.params);
        this.applied.set(client, key);
      }
      this.statements.add();
      const name = prepare ? this.statementName(client, sql) : undefined;
      const result = name ? await client.query({ name, text: sql, values: params as unknown[] }) : await client.query(sql, params as unknown[]);
      return result.rows as T[];
    } finally {
      client.release();
    }
  }

  /** The prepared statement's name for this text on this connection, or undefined when it has its share already. */
  private statementName(client: PoolClient, sql: string): string | undefined {
    const name = `dhr_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    let names = this.prepared.get(client);
    if (!names) this.prepared.set(client, (names = new Set()));
    if (names.has(name)) return name;
    if (names.size >= this.preparedStatements) return undefined;
    names.add(name);
    return name;
  }

  /** Citus: the settings as SET LOCAL in a transaction of their own, so they reach the shards (localSettingsStatement). */
  private queryWithLocalSettings<T>(settings: Record<string, string>, sql: string, params: readonly unknown[]): Promise<T[]> {
    return this.inTransaction(localSettingsStatement(settings), (tx) => tx.query<T>(sql, params));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    // Citus: a transaction that writes shards and then a reference table (a job's batch, then its
    // progress) must not have used parallel shard connections; sequential mode keeps it on one
    // connection per worker. Same round trip.
    return this.inTransaction(this.distributed === 'citus' ? "BEGIN; SET LOCAL citus.multi_shard_modify_mode TO 'sequential'" : 'BEGIN', fn);
  }

  /** fn on one connection between `begin` (BEGIN and any SET LOCAL) and COMMIT; ROLLBACK if it throws. */
  private async inTransaction<T>(begin: string, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx = clientQueryable(client, this.statements);
    try {
      await tx.query(begin);
      const result = await fn(tx);
      await tx.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    const prober = this.prober;
    this.prober = undefined;
    await prober?.then((c) => c.end()).catch(() => undefined);
    await this.prisma.$disconnect();
    await this.pool.end();
  }
}

function clientQueryable(client: PoolClient, counter: StatementCounter): Queryable {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
      counter.add();
      const result = await client.query(sql, params as unknown[]);
      return result.rows as T[];
    },
    async exec(sql: string): Promise<void> {
      counter.add();
      await client.query(sql);
    },
  };
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgresql://(unparseable url)';
  }
}
