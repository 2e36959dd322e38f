import { activeAssignment } from './active';
import { coverage } from './coverage';
import type { Database } from './db';

/**
 * Work the store still owes its corpus: passages without a full-text index (search IS NULL) and
 * documents and passages without a vector of the active document / passage model (none active:
 * nothing is owed). Embedded counts come from the same index-only counts as `coverage`; a
 * document embedded from older content counts as embedded here (a job's STALE scope finds it).
 */
export async function pendingWork(db: Database): Promise<{ unindexedPassages: number; unembeddedPassages: number; unembeddedDocuments: number }> {
  const active = await activeAssignment(db);
  const [{ n: unindexedPassages }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passages WHERE search IS NULL');
  const counts = await coverage(db, { document: active.document?.id, passage: active.passage?.id });
  return {
    unindexedPassages,
    unembeddedPassages: active.passage ? counts.passages.total - counts.passages.embedded : 0,
    unembeddedDocuments: active.document ? counts.documents.total - counts.documents.embedded : 0,
  };
}
