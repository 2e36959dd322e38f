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

import type { PrismaClient } from './prisma';

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** Where the data lives: a directory for PGlite, the server URL (without password) for PostgreSQL. */
  readonly location: string;
  /** Typed queries over the same connection (vector and bulk statements stay raw SQL). */
  readonly prisma: PrismaClient;
  /** Runs fn in one transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Counts every statement sent, for tests that bound round trips and for stats. */
  readonly statements: StatementCounter;
  close(): Promise<void>;
}

export class StatementCounter {
  count = 0;
  add(): void {
    this.count += 1;
  }
  reset(): void {
    this.count = 0;
  }
}
