import { messageOf } from '../errors';
import { IngestError } from '../ingest/errors';
import type { Encoder } from '../encoders/types';
import { prepareDocument } from '../ingest/prepare';
import type { DocumentInput, IngestOptions } from '../ingest/types';
import type { Database } from '../store/db';
import { isDatabaseUnavailable } from '../store/faults';
import { indexLexical } from '../store/lexical';
import { writeDocument, type WriteStatus } from '../store/write';
import { passageTokenBudget } from './token-budget';
import { embedPending, type EmbeddingTargets, type EmbedProgress, type EmbedSummary } from './embed';

export const INGEST_STATUSES = ['created', 'updated', 'unchanged', 'failed'] as const satisfies readonly (WriteStatus | 'failed')[];
export type IngestStatus = (typeof INGEST_STATUSES)[number];

export interface IngestOutcome {
  /** Position of the document in the batch. */
  index: number;
  key: string | null;
  title: string | null;
  status: IngestStatus;
  documentId: number | null;
  passages: number;
  message: string | null;
}

export interface IngestSummary {
  outcomes: IngestOutcome[];
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  passages: number;
}

export interface IngestRunOptions extends IngestOptions {
  /** Documents written at once (PostgreSQL: up to the pool size; PGlite runs one at a time anyway). */
  concurrency?: number;
  onOutcome?: (outcome: IngestOutcome) => void;
}

/** What ingest reports as it goes, for progress bars and logs. */
export type IngestEvent =
  | { stage: 'write'; outcome: IngestOutcome; done: number; total: number }
  | { stage: 'index'; passages: number }
  | ({ stage: 'embed' } & EmbedProgress);

export interface IngestPipelineOptions extends IngestOptions {
  /** Documents written at once (PostgreSQL only). */
  concurrency?: number;
  /** How a failed input is named in its message (default `#index`; the CLI uses file:line). */
  labelOf?: (index: number) => string;
  /**
   * The models to embed the written documents with, asked once they have committed (an activation
   * that landed meanwhile must get their vectors); absent, or resolving to undefined: no embedding now.
   */
  embedWith?: (written: readonly number[]) => Promise<EmbeddingTargets | undefined>;
  embedBatchSize?: number;
  /**
   * The passage encoder to split passages for (its token budget), asked once before anything is
   * prepared; absent or undefined: passages are split by words only (`tokenBudget` if given).
   */
  splitFor?: () => Promise<Encoder | undefined>;
  onEvent?: (event: IngestEvent) => void;
}

export interface IngestResult extends IngestSummary {
  /** Passages given a full-text vector. */
  indexed: number;
  /** Null when no models were given to embed with. */
  embedded: EmbedSummary | null;
  /** Wall time of each stage, seconds. */
  seconds: { write: number; index: number; embed: number };
}

/**
 * The ingest pipeline every entry point uses (GraphQL mutation, `dhr ingest`, the demo corpus,
 * eval): prepare and write each document, give the written passages their full-text vectors,
 * then embed the written documents with the models `embedWith` names.
 */
export async function ingest(
  db: Database,
  inputs: readonly (DocumentInput | IngestError)[],
  options: IngestPipelineOptions,
): Promise<IngestResult> {
  const clock = stopwatch();
  let done = 0;
  const splitter = await options.splitFor?.();
  const tokenBudget = splitter ? passageTokenBudget(splitter) : options.tokenBudget;
  const summary = await ingestDocuments(
    db,
    inputs,
    { ...options, tokenBudget, onOutcome: (outcome) => options.onEvent?.({ stage: 'write', outcome, done: ++done, total: inputs.length }) },
    options.labelOf,
  );
  const write = clock();
  const written = writtenDocumentIds(summary.outcomes);
  const indexed = await indexLexical(db, written);
  options.onEvent?.({ stage: 'index', passages: indexed });
  const index = clock();
  const targets = await options.embedWith?.(written);
  const embedded = targets
    ? await embedPending(db, targets, {
        documentIds: written,
        batchSize: options.embedBatchSize,
        onProgress: (progress) => options.onEvent?.({ stage: 'embed', ...progress }),
      })
    : null;
  return { ...summary, indexed, embedded, seconds: { write, index, embed: clock() } };
}

/** Documents created or updated (unchanged and failed ones need no index or vectors). */
export function writtenDocumentIds(outcomes: readonly IngestOutcome[]): number[] {
  return outcomes.flatMap((o) => ((o.status === 'created' || o.status === 'updated') && o.documentId !== null ? [o.documentId] : []));
}

/** Seconds since the previous call (or since it was made). */
function stopwatch(): () => number {
  let last = process.hrtime.bigint();
  return () => {
    const now = process.hrtime.bigint();
    const seconds = Number(now - last) / 1e9;
    last = now;
    return seconds;
  };
}

/**
 * The write stage alone: each document is validated, then written in its own transaction, so a bad
 * document fails alone and leaves nothing half-written while the others go in.
 */
export async function ingestDocuments(
  db: Database,
  inputs: readonly (DocumentInput | IngestError)[],
  options: IngestRunOptions,
  labelOf: (index: number) => string = (i) => `#${i}`,
): Promise<IngestSummary> {
  const outcomes: IngestOutcome[] = new Array(inputs.length);
  const concurrency = db.kind === 'postgres' ? Math.max(1, options.concurrency ?? 4) : 1;
  // Two documents with the same key in one batch are written in batch order, never concurrently.
  const keyChains = new Map<string, Promise<unknown>>();
  let next = 0;

  const one = async (index: number): Promise<IngestOutcome> => {
    const item = inputs[index];
    if (item instanceof IngestError) return failed(index, null, null, item.message);
    let prepared;
    try {
      prepared = prepareDocument(item, options, labelOf(index));
    } catch (error) {
      return failed(index, item.key ?? null, item.title ?? null, messageOf(error));
    }
    const previous = keyChains.get(prepared.key) ?? Promise.resolve();
    const write = previous.then(() => writeDocument(db, prepared));
    keyChains.set(prepared.key, write.catch(() => undefined));
    try {
      const { status, documentId } = await write;
      return {
        index,
        key: prepared.key,
        title: prepared.title,
        status,
        documentId,
        passages: prepared.passages.length,
        message: null,
      };
    } catch (error) {
      // A lost database fails the whole request (SERVICE_UNAVAILABLE, retry), not one document with the driver's text.
      if (isDatabaseUnavailable(error)) throw error;
      return failed(index, prepared.key, prepared.title, `document "${prepared.key}": ${messageOf(error)}`);
    }
  };

  const worker = async () => {
    while (next < inputs.length) {
      const index = next++;
      const outcome = await one(index);
      outcomes[index] = outcome;
      options.onOutcome?.(outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, inputs.length) }, worker));
  return summarize(outcomes);
}

function failed(index: number, key: string | null, title: string | null, message: string): IngestOutcome {
  return { index, key, title, status: 'failed', documentId: null, passages: 0, message };
}

export function summarize(outcomes: IngestOutcome[]): IngestSummary {
  const count = (s: IngestStatus) => outcomes.filter((o) => o.status === s).length;
  return {
    outcomes,
    created: count('created'),
    updated: count('updated'),
    unchanged: count('unchanged'),
    failed: count('failed'),
    passages: outcomes.reduce((n, o) => n + (o.status === 'created' || o.status === 'updated' ? o.passages : 0), 0),
  };
}
