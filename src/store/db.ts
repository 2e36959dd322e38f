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
  close(): Promise<void>;
}

/** One statement that sets every given setting for the session (set_config(..., false)). */
export function settingsStatement(settings: Record<string, string>): { sql: string; params: string[] } {
  const entries = Object.entries(settings);
  return {
    sql: `SELECT ${entries.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, false)`).join(', ')}`,
    params: entries.flat(),
  };
}
