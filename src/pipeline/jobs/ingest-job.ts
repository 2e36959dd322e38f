import { messageOf } from '../../errors';
import { prepareDocument } from '../../ingest/prepare';
import type { DocumentInput, IngestOptions } from '../../ingest/types';
import type { Database } from '../../store/db';
import { createIngestJob, type IngestJobRow, type StagedDocument } from '../../store/ingest-jobs';

/**
 * Queues an ingest job of these documents (the workers write them: ingest-batch.ts). Documents are
 * stored as JSON, which cannot hold a NUL character or a lone surrogate: such a document is failed
 * now with the message a synchronous ingest gives it (prepareDocument refuses both), and the others
 * are queued, so one bad document still fails alone.
 */
export function queueIngestJob(
  db: Database,
  inputs: readonly DocumentInput[],
  options: IngestOptions,
  /** The external model the documents' own vectors are for (ingestDocuments' model); absent: the active external models. */
  vectorModel?: string,
): Promise<IngestJobRow> {
  const staged = inputs.map((input, i): StagedDocument => {
    if (storable(input)) return { input };
    let message = 'a string holds a NUL character or malformed Unicode, which cannot be stored';
    try {
      prepareDocument(input, options, `#${i}`);
    } catch (error) {
      message = messageOf(error);
    }
    return { failed: { key: input.key ?? null, title: input.title ?? null, message } };
  });
  return createIngestJob(db, staged, vectorModel);
}

/** Whether every string (object keys included) is one PostgreSQL's jsonb can store. */
function storable(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed() && !value.includes('\u0000');
  if (Array.isArray(value)) return value.every(storable);
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([k, v]) => storable(k) && storable(v));
  return true;
}
