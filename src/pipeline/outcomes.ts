import type { IngestOptions } from '../ingest/types';
import type { SuppliedVectorModels } from '../store/embeddings';
import type { WriteStatus } from '../store/write';

/** What one ingest reports per document, shared by the per-document and the bulk write stages. */
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
  /** What ingest read other than as written (an untitled heading titled by its source or merged): the document went in. */
  warnings: string[];
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
  /** The external models that take the documents' own vectors (checked by `ingest` first, src/ingest/vectors.ts). */
  vectors?: SuppliedVectorModels;
  /** Documents written at once (PostgreSQL: up to the pool size; PGlite runs one at a time anyway). */
  concurrency?: number;
  onOutcome?: (outcome: IngestOutcome) => void;
}

export function failed(index: number, key: string | null, title: string | null, message: string): IngestOutcome {
  return { index, key, title, status: 'failed', documentId: null, passages: 0, message, warnings: [] };
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
