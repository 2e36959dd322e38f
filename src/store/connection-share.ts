import { AsyncLocalStorage } from 'node:async_hooks';
import pLimit from 'p-limit';
import { DomainError, ErrorCode } from '../errors';
import type { Database, Queryable } from './db';

export interface ConnectionShare {
  /** Statements of this one caller (an operation) that may hold a pooled connection at once. */
  connections: number;
  /** Epoch ms past which a statement still waiting for its turn is refused (TIMEOUT) rather than started. */
  deadline: number;
  /** Names the setting that sets the deadline, for the refusal's message. */
  deadlineSetting: string;
}

/** What a share saw: the most statements it ran at once (tests and metrics read it). */
export interface ShareUsage {
  peak: number;
}

/**
 * The shares whose turn the running code holds. One storage for every share, not one per share:
 * Node 20 keeps each AsyncLocalStorage that ever ran in a process-wide list and visits every one
 * of them for each promise created, so a storage per operation made every later request slower
 * (45 ms of CPU a question after 1,700 of them, growing without bound) and was never freed.
 */
const holding = new AsyncLocalStorage<ReadonlySet<object>>();

/**
 * One caller's share of a database pool. GraphQL runs an operation's root fields at once, so 20
 * aliased retrievals asked for 20 connections together and held the whole pool while others
 * queued behind them. Here an operation's statements queue among themselves instead, at most
 * `connections` at a time, and the rest of the pool stays free for other callers. Work that is
 * still queued when the request's time is up never starts. Prisma's queries (navigation, by
 * primary key, short) share the pool directly. A Database wrapper rather than a pool per request:
 * the pool's connections and their session settings stay shared.
 */
export function shareOf(db: Database, share: ConnectionShare): Database & { shareUsage: ShareUsage } {
  const limit = pLimit(Math.max(1, share.connections));
  const usage: ShareUsage = { peak: 0 };
  // A statement sent from inside a gated one (a transaction's body that also reads through the
  // database) already holds its caller's turn: queuing it again would wait on itself.
  const turn = {};
  const inside = () => holding.getStore()?.has(turn) === true;
  const held = () => new Set([...(holding.getStore() ?? []), turn]);
  const gate = <T>(fn: () => Promise<T>): Promise<T> =>
    inside()
      ? fn()
      : limit(() => {
          if (Date.now() > share.deadline) {
            return Promise.reject(
              new DomainError(ErrorCode.TIMEOUT, `the request ran out of time (${share.deadlineSetting}) before this statement could start; ask for less`),
            );
          }
          usage.peak = Math.max(usage.peak, limit.activeCount);
          return holding.run(held(), fn);
        });
  return {
    get kind() {
      return db.kind;
    },
    get location() {
      return db.location;
    },
    get distributed() {
      return db.distributed;
    },
    get prisma() {
      return db.prisma;
    },
    get statements() {
      return db.statements;
    },
    shareUsage: usage,
    query: <T>(sql: string, params?: readonly unknown[]) => gate(() => db.query<T>(sql, params)),
    exec: (sql: string) => gate(() => db.exec(sql)),
    queryWithSettings: <T>(settings: Record<string, string>, sql: string, params?: readonly unknown[]) =>
      gate(() => db.queryWithSettings<T>(settings, sql, params)),
    transaction: <T>(fn: (tx: Queryable) => Promise<T>) => gate(() => db.transaction(fn)),
    ...(db.vectorParam ? { vectorParam: db.vectorParam.bind(db) } : {}),
    ...(db.poolUsage ? { poolUsage: db.poolUsage.bind(db) } : {}),
    ...(db.probe ? { probe: db.probe.bind(db) } : {}),
    close: () => db.close(),
  };
}
