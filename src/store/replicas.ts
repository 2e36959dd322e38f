import { LRUCache } from 'lru-cache';
import { Pool } from 'pg';
import type { Database } from './db';
import { classifyDatabaseError, guardPool } from './faults';
import { PostgresDatabase } from './postgres';
import { WalHistory, formatLsn, parseLsn, type Lsn } from './wal';

/**
 * Read replicas (docs/scale-out.md#read-replicas): streaming standbys of the primary that serve
 * read-only queries. A timer checks, every checkMs, the primary's WAL position and each replica's
 * replay position over a connection of its own (so a busy read pool never delays the check);
 * routing a read uses those cached positions and costs no round trip.
 *
 * A read goes to a replica that is up, was checked recently, is at most maxLagMs behind, and has
 * replayed the floor the read needs: the caller's own last write (read-your-writes) and the last
 * model activation this process saw (so the vectors of the active models are there). Otherwise it
 * goes to the primary. Positions only grow, so a cached position is a safe lower bound.
 */
export type ReplicaStatus = 'ok' | 'down' | 'lagging' | 'not a standby' | 'starting';

export interface Replica {
  /** host:port/database: the URL without user or password, for logs, metrics and /readyz. */
  readonly name: string;
  readonly db: Database;
}

export interface ReplicaReport {
  name: string;
  status: ReplicaStatus;
  /** How far replay is behind the primary, ms (null: unknown). */
  lagMs: number | null;
  replayLsn: string | null;
  /** Why it is not serving (no driver text: this goes to /readyz). */
  problem?: string;
}

export type ReadReason = 'replica' | 'read-your-writes' | 'no healthy replica';

export interface ReadRoute {
  db: Database;
  /** The replica chosen; absent: the primary. */
  replica?: Replica;
  reason: ReadReason;
}

export interface ReplicaSetOptions {
  maxLagMs: number;
  checkMs: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  maxConnections?: number;
  preparedStatements?: number;
}

export type ReplicaTransition = { replica: string; from: ReplicaStatus; to: ReplicaStatus; report: ReplicaReport };

interface Entry extends Replica {
  probe: Pool;
  status: ReplicaStatus;
  replayed?: Lsn;
  lagMs?: number;
  checkedAt?: number;
  problem?: string;
  probing: boolean;
  /** A read failed on it: skipped until then even if a check succeeds meanwhile. */
  heldUntil: number;
}

/** Larger than any WAL position: a floor no replica meets (the primary's position was not readable). */
const PRIMARY_ONLY: Lsn = (1n << 64n) - 1n;
const CURRENT_LSN = 'SELECT pg_current_wal_lsn()::text AS lsn';
const REPLAY = 'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed';

export class ReplicaSet {
  private readonly entries: Entry[];
  private readonly history: WalHistory;
  /** Per API key: the primary's WAL position after its last write. */
  private readonly writes: LRUCache<number, Lsn>;
  /** Replicas must have replayed this: the last model activation this process saw. */
  private floor: Lsn = 0n;
  private timer?: NodeJS.Timeout;
  private primaryProbing = false;
  private turn = 0;
  private closed = false;
  private readonly listeners = new Set<(t: ReplicaTransition) => void>();
  /** A check older than this no longer vouches for a replica (a probe that hangs). */
  private readonly staleMs: number;

  private constructor(
    private readonly primary: Database,
    urls: string[],
    private readonly options: ReplicaSetOptions,
  ) {
    // Two missed checks and some slack for a busy host; a probe that hangs gives up by then.
    this.staleMs = 2 * options.checkMs + 2000;
    // A replica that still lacks a write once maxLagMs passed is skipped as lagging anyway, so a
    // write's floor need not be remembered much longer than that.
    this.writes = new LRUCache({ max: 10_000, ttl: 2 * (options.maxLagMs + options.checkMs) + 1000 });
    this.history = new WalHistory(options.maxLagMs + 2 * options.checkMs);
    this.entries = urls.map((url) => {
      const probe = new Pool({
        connectionString: url,
        max: 1,
        connectionTimeoutMillis: Math.min(options.connectTimeoutMs, this.staleMs),
        statement_timeout: this.staleMs,
      });
      guardPool(probe);
      const db = new PostgresDatabase({
        url,
        maxConnections: options.maxConnections,
        statementTimeoutMs: options.statementTimeoutMs,
        connectTimeoutMs: options.connectTimeoutMs,
        preparedStatements: options.preparedStatements,
      });
      // A standby of a Citus coordinator plans distributed statements too: its searches need the
      // settings sent the Citus way (SET LOCAL, propagated), or every shard runs at ef_search 40.
      db.distributed = primary.distributed;
      return {
        name: replicaName(url),
        db,
        probe,
        status: 'starting' as ReplicaStatus,
        probing: false,
        heldUntil: 0,
      };
    });
  }

  /**
   * Opens the replicas and checks them once before returning, so the first reads can use them.
   * The floor starts at the primary's position now: the model assignment this process loaded
   * before it had replicas is covered, as later ones are by raiseFloor.
   */
  static async open(primary: Database, urls: string[], options: ReplicaSetOptions): Promise<ReplicaSet> {
    const set = new ReplicaSet(primary, urls, options);
    await set.check();
    // A replica a few milliseconds behind the primary's first sample has an unknown lag until it
    // replays that sample: give it a few checks, so start-up reports a settled status.
    for (let i = 0; i < 5 && set.entries.some((e) => e.status === 'lagging' || e.status === 'starting'); i++) {
      await new Promise((resolve) => setTimeout(resolve, options.checkMs));
      await set.check();
    }
    set.floor = set.history.latest() ?? 0n;
    set.timer = setInterval(() => void set.check(), options.checkMs);
    set.timer.unref();
    return set;
  }

  get replicas(): readonly Replica[] {
    return this.entries;
  }

  /** Status changes (a replica went down, fell behind, came back): the server logs them. */
  onTransition(listener: (t: ReplicaTransition) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Where a read-only operation of this API key (absent: anonymous) runs. */
  forRead(keyId?: number): ReadRoute {
    const now = Date.now();
    const healthy = this.entries.filter((e) => e.status === 'ok' && e.checkedAt !== undefined && now - e.checkedAt <= this.staleMs && e.heldUntil <= now);
    if (healthy.length === 0) return { db: this.primary, reason: 'no healthy replica' };
    const own = keyId === undefined ? undefined : this.writes.get(keyId);
    const need = own !== undefined && own > this.floor ? own : this.floor;
    const caughtUp = healthy.filter((e) => (e.replayed ?? 0n) >= need);
    if (caughtUp.length === 0) return { db: this.primary, reason: 'read-your-writes' };
    // Least busy first (connections in use and callers waiting); ties take turns.
    const start = this.turn++ % caughtUp.length;
    let best = caughtUp[start];
    for (let i = 1; i < caughtUp.length; i++) {
      const e = caughtUp[(start + i) % caughtUp.length];
      if (busy(e) < busy(best)) best = e;
    }
    return { db: best.db, replica: best, reason: 'replica' };
  }

  /**
   * After a write by this key: its next reads need a replica that has replayed the primary's
   * position now. If that cannot be read, its reads stay on the primary until the floor expires.
   */
  async noteWrite(keyId: number): Promise<void> {
    const lsn = await this.primaryLsn().catch(() => PRIMARY_ONLY);
    this.writes.set(keyId, lsn);
  }

  /** Before a new model assignment is used: every read needs a replica that has replayed it. */
  async raiseFloor(): Promise<void> {
    const lsn = await this.primaryLsn();
    if (lsn > this.floor) this.floor = lsn;
  }

  /** A read on this replica failed for want of a connection: skip it until checks find it well again. */
  markDown(replica: Replica): void {
    const entry = this.entries.find((e) => e === replica);
    if (!entry) return;
    entry.heldUntil = Date.now() + Math.max(1000, 5 * this.options.checkMs);
    this.setStatus(entry, 'down', 'a read on it lost its connection');
  }

  report(): ReplicaReport[] {
    return this.entries.map((e) => reportOf(e));
  }

  /** One round of checks: the primary's position, then every replica's (each bounded by staleMs). */
  async check(): Promise<void> {
    if (!this.primaryProbing) {
      this.primaryProbing = true;
      // The primary unreachable: replicas are judged against the positions already known.
      await this.primaryLsn()
        .then((lsn) => this.history.add(Date.now(), lsn))
        .catch(() => undefined)
        .finally(() => (this.primaryProbing = false));
    }
    await Promise.all(this.entries.map((e) => this.checkReplica(e)));
  }

  private async checkReplica(e: Entry): Promise<void> {
    if (e.probing) return;
    e.probing = true;
    try {
      const { rows } = await e.probe.query<{ standby: boolean; replayed: string | null }>(REPLAY);
      const now = Date.now();
      e.checkedAt = now;
      const row = rows[0];
      if (!row.standby) {
        // Promoted, or a primary listed by mistake: its data no longer follows ours.
        e.replayed = undefined;
        e.lagMs = undefined;
        this.setStatus(e, 'not a standby', 'it is not in recovery (promoted, or not a replica of DATABASE_URL)');
        return;
      }
      if (row.replayed === null) {
        this.setStatus(e, 'starting', 'it has replayed nothing yet');
        return;
      }
      e.replayed = parseLsn(row.replayed);
      e.lagMs = this.history.lagMs(e.replayed, now);
      if (e.lagMs > this.options.maxLagMs) {
        this.setStatus(e, 'lagging', `its replay is more than REPLICA_MAX_LAG_MS (${this.options.maxLagMs} ms) behind the primary`);
      } else if (e.heldUntil <= now) {
        this.setStatus(e, 'ok');
      }
    } catch (error) {
      e.checkedAt = Date.now();
      e.lagMs = undefined;
      const fault = classifyDatabaseError(error);
      this.setStatus(e, 'down', fault === 'timeout' ? 'its check timed out' : fault === 'unavailable' ? 'it cannot be reached' : 'its check failed');
    } finally {
      e.probing = false;
    }
  }

  private async primaryLsn(): Promise<Lsn> {
    const [row] = await this.primary.query<{ lsn: string }>(CURRENT_LSN);
    return parseLsn(row.lsn);
  }

  private setStatus(e: Entry, status: ReplicaStatus, problem?: string): void {
    if (this.closed) return;
    const from = e.status;
    e.status = status;
    e.problem = problem;
    if (from === status) return;
    const transition = { replica: e.name, from, to: status, report: reportOf(e) };
    for (const listener of this.listeners) listener(transition);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all(this.entries.map(async (e) => Promise.all([e.probe.end().catch(() => undefined), e.db.close().catch(() => undefined)])));
  }
}

function busy(e: Entry): number {
  const usage = e.db.poolUsage?.();
  return usage ? usage.total - usage.idle + usage.waiting : 0;
}

function reportOf(e: Entry): ReplicaReport {
  return {
    name: e.name,
    status: e.status,
    lagMs: e.lagMs === undefined || !Number.isFinite(e.lagMs) ? null : e.lagMs,
    replayLsn: e.replayed === undefined ? null : formatLsn(e.replayed),
    ...(e.problem ? { problem: e.problem } : {}),
  };
}

/** host:port/database, without user or password. */
export function replicaName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(unparseable url)';
  }
}
