import { IngestError } from '../ingest/errors';
import { prepareDocument } from '../ingest/prepare';
import type { DocumentInput, IngestOptions } from '../ingest/types';
import type { Database } from './db';
import { writeDocument, type WriteStatus } from './write';
import { isDatabaseUnavailable } from './faults';

export type IngestStatus = WriteStatus | 'failed';

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

/**
 * Ingests a batch: each document is validated, then written in its own transaction, so a bad
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
