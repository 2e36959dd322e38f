import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../store/db';
import { jobStats } from '../store/job-stats';
import type { ReplicaSet } from '../store/replicas';

/** Seconds: from a cached lookup (ms) to a cold 1M-passage retrieval or a large ingest. */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The server's Prometheus metrics, in a registry of its own (not prom-client's global one), so
 * several servers in one process (tests) keep separate counts. Gauges that read the database
 * (jobs) or the pool are computed when scraped, not kept up to date on every change.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'operation' | 'type' | 'outcome'>;
  readonly requestDuration: Histogram<'operation' | 'type' | 'outcome'>;
  readonly retrieveDuration: Histogram<'mode' | 'stage'>;
  readonly rateLimited: Counter<'kind'>;
  /** Requests refused before they were read, MAX_IN_FLIGHT being in flight. */
  readonly shed: Counter;
  /** Read-only operations by where they ran (replica or primary) and why (docs/scale-out.md#read-replicas). */
  readonly readRoutes: Counter<'target' | 'reason'>;

  constructor(db: Database, replicas?: ReplicaSet) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'dhr_graphql_requests_total',
      help: 'GraphQL requests by operation (root fields), operation type and outcome (ok or the error code)',
      labelNames: ['operation', 'type', 'outcome'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'dhr_graphql_request_duration_seconds',
      help: 'GraphQL request latency from parsing to the response, by operation, type and outcome',
      labelNames: ['operation', 'type', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.retrieveDuration = new Histogram({
      name: 'dhr_retrieve_duration_seconds',
      help: 'retrieve stages by mode: encode (question vectors), search (the one SQL statement: both DHR stages and fusion), total',
      labelNames: ['mode', 'stage'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rateLimited = new Counter({
      name: 'dhr_rate_limit_rejections_total',
      help: 'requests refused with RATE_LIMITED (HTTP 429), by budget (query or mutation)',
      labelNames: ['kind'],
      registers,
    });
    this.shed = new Counter({
      name: 'dhr_requests_shed_total',
      help: 'GraphQL requests refused with OVERLOADED (HTTP 503) before their body was read, MAX_IN_FLIGHT requests being in flight',
      registers,
    });
    this.readRoutes = new Counter({
      name: 'dhr_read_routes_total',
      help: 'read-only operations (with DATABASE_READ_URL) by target (replica, primary) and reason (replica, read-your-writes, no healthy replica)',
      labelNames: ['target', 'reason'],
      registers,
    });
    if (replicas) {
      new Gauge({
        name: 'dhr_replica_up',
        help: 'per read replica: 1 while it serves reads (up, a standby, within REPLICA_MAX_LAG_MS), else 0',
        labelNames: ['replica', 'status'],
        registers,
        collect() {
          this.reset();
          for (const r of replicas.report()) this.set({ replica: r.name, status: r.status }, r.status === 'ok' ? 1 : 0);
        },
      });
      new Gauge({
        name: 'dhr_replica_lag_seconds',
        help: 'per read replica: how long ago the primary had WAL it has not replayed (to within REPLICA_CHECK_MS)',
        labelNames: ['replica'],
        registers,
        collect() {
          this.reset();
          for (const r of replicas.report()) if (r.lagMs !== null) this.set({ replica: r.name }, r.lagMs / 1000);
        },
      });
    }
    new Gauge({
      name: 'dhr_db_pool_connections',
      help: 'PostgreSQL pool connections: total (open), idle, waiting (callers queued), max (PGlite: none)',
      labelNames: ['state'],
      registers,
      collect() {
        const usage = db.poolUsage?.();
        this.reset();
        if (!usage) return;
        for (const [state, value] of Object.entries(usage)) this.set({ state }, value);
      },
    });
    // The scrape calls every collect in the same tick: the three job gauges share one read of the
    // database per scrape. An outage leaves them empty and dhr_database_up at 0.
    let reading: Promise<Awaited<ReturnType<typeof jobStats>> | undefined> | undefined;
    const stats = () =>
      (reading ??= jobStats(db)
        .then(
          (s) => s,
          () => undefined,
        )
        .finally(() => setImmediate(() => (reading = undefined))));
    new Gauge({
      name: 'dhr_embedding_jobs',
      help: 'embedding jobs by status',
      labelNames: ['status'],
      registers,
      async collect() {
        const s = await stats();
        this.reset();
        for (const [status, n] of Object.entries(s?.byStatus ?? {})) this.set({ status }, n);
      },
    });
    new Gauge({
      name: 'dhr_embedding_job_items',
      help: 'progress of open (queued or running) embedding jobs: items done and total per level',
      labelNames: ['job', 'model', 'level', 'state'],
      registers,
      async collect() {
        const s = await stats();
        this.reset();
        for (const job of s?.open ?? []) {
          const labels = { job: String(job.id), model: job.model };
          this.set({ ...labels, level: 'documents', state: 'done' }, job.documentsDone);
          this.set({ ...labels, level: 'documents', state: 'total' }, job.documentsTotal);
          this.set({ ...labels, level: 'passages', state: 'done' }, job.passagesDone);
          this.set({ ...labels, level: 'passages', state: 'total' }, job.passagesTotal);
        }
      },
    });
    new Gauge({
      name: 'dhr_database_up',
      help: '1 when this scrape could read the database, else 0',
      registers,
      async collect() {
        this.set((await stats()) ? 1 : 0);
      },
    });
  }

  /** retrieve's own timings (ms), per mode. */
  observeRetrieval(mode: string, timings: { encodeMs: number; searchMs: number; totalMs: number }): void {
    this.retrieveDuration.observe({ mode, stage: 'encode' }, timings.encodeMs / 1000);
    this.retrieveDuration.observe({ mode, stage: 'search' }, timings.searchMs / 1000);
    this.retrieveDuration.observe({ mode, stage: 'total' }, timings.totalMs / 1000);
  }

  /** The text exposition format and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
