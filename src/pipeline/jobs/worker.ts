import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inBackground } from '../../encoders/priority';
import { EncoderError } from '../../encoders/types';
import type { IngestOptions } from '../../ingest/types';
import { messageOf } from '../../errors';
import type { Database } from '../../store/db';
import { isDatabaseUnavailable, storageFaultOf } from '../../store/faults';
import { storageHealth, type FaultLog } from '../../store/storage-health';
import { batchDocuments, batchPassages, claimBatch, completeBatch, failJob, finishJobs, startQueuedJobs, type ClaimedBatch } from '../../store/jobs';
import { encodeDocuments, encodePassages } from '../encode';
import { finishPendingStep } from '../pending';
import { failIngestJob } from '../../store/ingest-jobs';
import { pruneFinishedJobs } from '../../store/job-retention';
import { runIngestBatch, type IngestBatchOptions } from './ingest-batch';
import type { ModelRegistry } from './registry';

export interface WorkerOptions {
  /** Items per batch when a job plans catch-up work (new batches are planned by createJob's caller). */
  batchSize: number;
  /** Sleep between polls when there is nothing to do. */
  pollMs?: number;
  /** A failing batch is retried this many times (a concurrent delete can break its write) before the job fails. */
  maxAttempts?: number;
  /** Appends "level id,id,…" per encoded batch to this file, before the batch commits: crash tests count recomputation with it. */
  trace?: string;
  log?: (message: string) => void;
  /** Structured log (the server's pino logger) for faults; absent: they go to `log` as text. */
  logger?: FaultLog;
  /** How old a pending record must be before the worker finishes it (default 120 s). */
  pendingGraceSeconds?: number;
  /**
   * While this says false, pending records are left alone: `dhr serve` is finishing them itself at
   * first start (the demo corpus). Both would encode the same passages, and on PGlite the worker's
   * step, one transaction, would hold the store for every request meanwhile. Absent: always.
   */
  finishPendingNow?: () => boolean;
  /**
   * Ingest jobs (store/ingest-jobs.ts) are worked before re-embedding ones, a batch a step, with
   * these options (the registry, when there is one, names the models to split for and embed with).
   * Absent: this worker leaves them to others.
   */
  ingest?: Omit<IngestBatchOptions, 'targets' | 'onClaimed'>;
  /** Finished jobs older than this are deleted when the worker is idle (store/job-retention.ts); absent or 0: kept. */
  retentionSeconds?: number;
  /** How often an idle worker prunes, the first time this long after it was made (default 10 minutes). */
  pruneEveryMs?: number;
}

class Cancelled extends Error {}

/** How often a worker polls, how much a step takes and how long finished jobs are kept, from the settings (JOB_BATCH_SIZE, JOB_POLL_MS, JOB_RETENTION_DAYS). */
export function jobWorkerSettings(config: {
  jobBatchSize: number;
  jobPollMs: number;
  jobRetentionDays: number;
}): Pick<WorkerOptions, 'batchSize' | 'pollMs' | 'retentionSeconds'> {
  return { batchSize: config.jobBatchSize, pollMs: config.jobPollMs, retentionSeconds: config.jobRetentionDays * 86_400 };
}

/** How a worker runs ingest jobs, from the settings (INGEST_JOB_BATCH_DOCUMENTS, INGEST_JOB_BATCH_BYTES, EMBED_ON_INGEST). */
export function ingestJobOptions(config: {
  ingest: IngestOptions;
  ingestJob: { batchDocuments: number; batchBytes: number };
  embedOnIngest: boolean;
  embedBatchSize: number;
}): NonNullable<WorkerOptions['ingest']> {
  return {
    ingest: config.ingest,
    embed: config.embedOnIngest,
    embedBatchSize: config.embedBatchSize,
    maxDocuments: config.ingestJob.batchDocuments,
    maxBytes: config.ingestJob.batchBytes,
  };
}

/** Pending documents finished per step: one transaction, so a step holds PGlite about as long as a job batch. */
const PENDING_DOCUMENTS_PER_STEP = 8;
/** An ingest finishes its own documents within moments of writing them; older records were abandoned. */
const PENDING_GRACE_S = 120;
/** An idle worker prunes finished jobs at most this often (their age is counted in days), not at start: a start is busy enough. */
const PRUNE_EVERY_MS = 10 * 60_000;
/** The longest wait between tries while the store refuses writes (read-only, full): each fault doubles the poll. */
const STORAGE_BACKOFF_MAX_MS = 30_000;

/**
 * Works ingest jobs (a batch per step: pipeline/jobs/ingest-batch.ts), then re-embedding jobs: claims a batch (row lock, SKIP LOCKED), encodes it, writes the vectors,
 * the batch's done mark and the job's progress in the same transaction. Any number of workers, in
 * any number of processes, share the queue; a crash loses at most the batch in flight.
 */
export class JobWorker {
  private readonly attempts = new Map<number, number>();
  private readonly ingestAttempts = new Map<number, number>();
  private wake?: () => void;
  private lastPrune = performance.now();

  /** Without a registry (a server with no encoders) it works ingest jobs only, writing and indexing without embedding. */
  constructor(
    private readonly db: Database,
    private readonly registry: ModelRegistry | undefined,
    private readonly options: WorkerOptions,
  ) {}

  /**
   * Works one batch, or finishes jobs whose batches are all done; false when there was nothing to do (then it prunes finished jobs, when due).
   * Its encoding is background work (encoders/priority.ts): no request waits on a batch, so it yields the cores to those that do.
   */
  async step(): Promise<boolean> {
    const worked = await inBackground(() => this.work());
    if (!worked) await this.prune();
    return worked;
  }

  private async work(): Promise<boolean> {
    if (await this.ingestStep()) return true;
    const registry = this.registry;
    if (!registry) return false;
    await startQueuedJobs(this.db);
    let claimed: ClaimedBatch | undefined;
    try {
      const worked = await this.db.transaction(async (tx) => {
        const batch = await claimBatch(tx);
        if (!batch) return false;
        claimed = batch;
        const encoder = await registry.encoderFor(batch.model);
        const onEncoded = (items: readonly { id: number }[]) => this.trace(batch, items);
        const { written } =
          batch.level === 'documents'
            ? await encodeDocuments(tx, encoder, batch.model, await batchDocuments(tx, batch), { onEncoded })
            : await encodePassages(tx, encoder, batch.model, await batchPassages(tx, batch), { onEncoded, replace: batch.scope === 'ALL' });
        if (!(await completeBatch(tx, batch, written))) throw new Cancelled();
        return true;
      });
      if (!worked) {
        const { finished, replanned } = await finishJobs(this.db, this.options.batchSize);
        for (const id of finished) this.options.log?.(`job ${id} succeeded`);
        if (finished.length + replanned.length > 0) return true;
        return (await this.finishPending()) > 0;
      }
      this.attempts.delete(claimed!.id);
      return true;
    } catch (error) {
      if (error instanceof Cancelled) return true;
      // A lost database or a store refusing writes is not the batch's fault: no attempt counted; run() waits and tries again.
      if (isDatabaseUnavailable(error) || storageFaultOf(error)) throw error;
      if (!claimed) throw error;
      const batch: ClaimedBatch = claimed;
      const attempts = (this.attempts.get(batch.id) ?? 0) + 1;
      this.attempts.set(batch.id, attempts);
      const message = messageOf(error);
      // A model that cannot load or encode will not get better by retrying.
      if (error instanceof EncoderError || attempts >= (this.options.maxAttempts ?? 3)) {
        await failJob(this.db, batch.jobId, `${batch.level} ${batch.firstId}–${batch.lastId}: ${message}`);
        this.options.log?.(`job ${batch.jobId} failed: ${message}`);
      }
      return true;
    }
  }

  /**
   * One batch of the oldest ingest job. A batch that fails as a whole (not one document: those fail
   * alone inside it) is tried again, up to maxAttempts, before the job fails with its message.
   */
  private async ingestStep(): Promise<boolean> {
    const ingest = this.options.ingest;
    if (!ingest) return false;
    const registry = this.registry;
    let jobId: number | undefined;
    try {
      const result = await runIngestBatch(this.db, {
        ...ingest,
        targets: registry ? () => registry.current({ fresh: true }) : undefined,
        onClaimed: (id) => (jobId = id),
      });
      if (!result.worked) return false;
      if (result.finished) this.options.log?.(`ingest job ${result.jobId} succeeded`);
      this.ingestAttempts.delete(result.jobId);
      return true;
    } catch (error) {
      if (isDatabaseUnavailable(error) || storageFaultOf(error)) throw error;
      const failing = jobId;
      if (failing === undefined) throw error;
      const attempts = (this.ingestAttempts.get(failing) ?? 0) + 1;
      this.ingestAttempts.set(failing, attempts);
      const message = messageOf(error);
      if (error instanceof EncoderError || attempts >= (this.options.maxAttempts ?? 3)) {
        await failIngestJob(this.db, failing, message);
        this.options.log?.(`ingest job ${failing} failed: ${message}`);
      }
      return true;
    }
  }

  /**
   * With no job to work: finishes a few documents an ingest left pending (killed, or run without
   * embedding) for the active models. Records younger than PENDING_GRACE_S are left to the ingest
   * that is still finishing them. Returns how many were completed.
   */
  private async finishPending(): Promise<number> {
    if (this.options.finishPendingNow && !this.options.finishPendingNow()) return 0;
    const targets = await this.registry?.current();
    if (!targets) return 0;
    const cleared = await finishPendingStep(this.db, targets, {
      limit: PENDING_DOCUMENTS_PER_STEP,
      olderThanSeconds: this.options.pendingGraceSeconds ?? PENDING_GRACE_S,
    });
    if (cleared > 0) this.options.log?.(`worker: finished ${cleared} pending documents`);
    return cleared;
  }

  /** With nothing else to do, at most every PRUNE_EVERY_MS: deletes the jobs that finished longer ago than the retention. */
  private async prune(): Promise<void> {
    const retention = this.options.retentionSeconds ?? 0;
    if (retention <= 0 || performance.now() - this.lastPrune < (this.options.pruneEveryMs ?? PRUNE_EVERY_MS)) return;
    this.lastPrune = performance.now();
    const pruned = await pruneFinishedJobs(this.db, retention);
    const total = pruned.ingest + pruned.embedding + pruned.tune;
    if (total > 0)
      this.options.log?.(
        `worker: deleted ${pruned.ingest} ingest, ${pruned.embedding} embedding and ${pruned.tune} tune jobs finished over ${retention} s ago`,
      );
  }

  /** Polls until the signal aborts; with `until`, returns as soon as it says so (checked when idle). */
  async run(options: { signal?: AbortSignal; until?: () => Promise<boolean> } = {}): Promise<void> {
    const pollMs = this.options.pollMs ?? 1000;
    /** Storage faults in a row: the store's health logs the first (error level, once), the wait grows. */
    let storageFaults = 0;
    while (!options.signal?.aborted) {
      let worked = false;
      try {
        worked = await this.step();
        storageFaults = 0;
      } catch (error) {
        const storage = storageFaultOf(error);
        if (storage) {
          storageFaults++;
          storageHealth(this.db).record(storage, this.faultLog());
        } else this.options.log?.(`worker: ${error instanceof Error ? error.message : error}`);
      }
      if (worked) continue;
      if (options.until && (await options.until())) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        const wait = storageFaults > 0 ? Math.min(pollMs * 2 ** storageFaults, STORAGE_BACKOFF_MAX_MS) : pollMs;
        void sleep(wait, undefined, { signal: options.signal }).then(resolve, resolve);
      });
      this.wake = undefined;
    }
  }

  private faultLog(): FaultLog {
    const text = this.options.log;
    return (
      this.options.logger ?? {
        error: (fields, message) => text?.(`worker: ${message}: ${String(fields.cause)} (${String(fields.database)})`),
        info: (_fields, message) => text?.(`worker: ${message}`),
      }
    );
  }

  /** Cuts the poll short: a job was just created in this process. */
  poke(): void {
    this.wake?.();
  }

  private trace(batch: ClaimedBatch, items: readonly { id: number }[]): void {
    if (this.options.trace) appendFileSync(this.options.trace, `${batch.level} ${items.map((i) => i.id).join(',')}\n`);
  }
}
