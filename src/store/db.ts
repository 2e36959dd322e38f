/**
 * One SQL interface over both databases: embedded PGlite and a PostgreSQL server.
 * Everything above the store speaks plain SQL with $1 parameters through this, so the same
 * statements (and the same tests) run on both.
 */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

import type { PrismaClient } from '../generated/prisma/client';
import type { StatementCounter } from './statements';

export type DatabaseKind = 'pglite' | 'postgres';

/** DHR_DISTRIBUTED: how the store is spread over servers (absent: one server). */
export type Distribution = 'citus';

export interface PoolUsage {
  /** Open connections, idle ones included. */
  total: number;
  idle: number;
  /** Callers queued for a connection. */
  waiting: number;
  max: number;
}

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** Where the data lives: a directory for PGlite, the server URL (without password) for PostgreSQL. */
  readonly location: string;
  /** Set when the store is a Citus coordinator whose title tree is distributed (store/citus.ts). */
  distributed?: Distribution;
  /** Typed queries over the same connection (vector and bulk statements stay raw SQL). */
  readonly prisma: PrismaClient;
  /**
   * Runs one statement with these session settings (planner and index GUCs such as
   * hnsw.ef_search) in force. Settings are applied to the connection only when they differ from
   * what it last had, so a repeated kind of query costs one round trip, not a transaction's four.
   * Only statements that send their own settings may depend on these GUCs.
   */
  queryWithSettings<T = Record<string, unknown>>(settings: Record<string, string>, sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * How a vector parameter is best sent to this database (absent: as a text literal). A search
   * statement casts it, `$n::vector(dim)`, so the server knows its type either way.
   */
  vectorParam?(vector: Float32Array): unknown;
  /** Runs fn in one transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Counts every statement sent, for tests that bound round trips and for stats. */
  readonly statements: StatementCounter;
  /** Connections of the pool (PostgreSQL; PGlite has one in-process connection and no pool). */
  poolUsage?(): PoolUsage;
  /**
   * Runs one read-only statement on a connection of its own, never queued behind the pool, so a
   * health check tells whether the database answers even while every pooled connection is busy
   * (PostgreSQL; absent: use query).
   */
  probe?<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * Citus: a session's settings stay on the coordinator; only SET LOCAL inside a transaction block,
 * with citus.propagate_set_commands = 'local', reaches the workers' connections (hnsw.ef_search
 * set on the session left every shard at pgvector's default of 40: stage 1 returned 40 documents
 * a shard, whatever k1). One simple-protocol string opening the transaction with every setting.
 * Names and values are the product's own (statement builders); both are still checked/quoted.
 */
export function localSettingsStatement(settings: Record<string, string>): string {
  const sets = Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_][a-z0-9_.]*$/.test(name)) throw new Error(`invalid setting name ${JSON.stringify(name)}`);
    return `SET LOCAL ${name} TO '${value.replace(/'/g, "''")}'`;
  });
  return ['BEGIN', "SET LOCAL citus.propagate_set_commands TO 'local'", ...sets].join('; ');
}

/** One statement that sets every given setting for the session (set_config(..., false)). */
export function settingsStatement(settings: Record<string, string>): { sql: string; params: string[] } {
  const entries = Object.entries(settings);
  return {
    sql: `SELECT ${entries.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, false)`).join(', ')}`,
    params: entries.flat(),
  };
}
