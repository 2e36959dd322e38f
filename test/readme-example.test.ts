import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadDemoCorpus } from '../src/cli/demo';
import { EncoderSet } from '../src/encoders/set';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { packageRoot } from '../src/paths';
import { DEFAULT_MODE } from '../src/retrieval/modes';
import { retrieve } from '../src/retrieval/retrieve';
import { prepareEmbedding, type EmbeddingTargets } from '../src/pipeline/embed';
import { indexLexical } from '../src/store/lexical';
import { corpusSettingsOf } from '../src/retrieval/settings';
import { currentSettings } from '../src/store/retrieval-settings';
import { DEMO_PASSAGE_BUDGET } from '../src/cli/demo';
import { createTestDatabase, type TestDatabase } from './helpers/database';

/**
 * The README's first example question on the demo corpus (the whole CIA World Factbook), in the
 * default mode, as a new user meets it: the server has its encoder and has just loaded the corpus,
 * whose embedding is still under way (here: not started). BM25 carries the answer meanwhile, and
 * the retrieval says what it could not see. (With the corpus fully embedded, the Factbook
 * evaluation measures the same kind of question: docs/eval/factbook.md.)
 */
describe("the README's first example", () => {
  let t: TestDatabase;
  let encoders: EncoderSet;
  let targets: EmbeddingTargets;
  beforeAll(async () => {
    t = await createTestDatabase();
    await loadDemoCorpus(t.db, DEFAULT_INGEST_OPTIONS);
    await indexLexical(t.db);
    encoders = await EncoderSet.load();
    targets = await prepareEmbedding(t.db, encoders);
  }, 180_000);
  afterAll(async () => {
    await encoders?.close();
    await t?.drop();
  });

  it('comes back right in the top 3 of the default mode', async () => {
    const readme = readFileSync(join(packageRoot(), 'README.md'), 'utf8');
    const example = /retrieve\(question: "([^"]+)", k1: (\d+), k2: (\d+)/.exec(readme);
    expect(example).not.toBeNull();
    const [, question, k1, k2] = example!;
    expect(question).toBe('What is the capital of Norway?');
    // with the demo's own settings, as the API reads them: its passage budget bounds stage 2
    const corpus = corpusSettingsOf(await currentSettings(t.db));
    const r = await retrieve(t.db, targets, { question, k1: Number(k1), k2: Number(k2) }, { corpus });
    expect(r.args.mode).toBe(DEFAULT_MODE);
    expect(r.parameters.find((p) => p.name === 'passageBudget')).toEqual({ name: 'passageBudget', value: DEMO_PASSAGE_BUDGET, source: 'corpus' });
    const rows = await t.db.query<{ id: number; text: string; key: string }>(
      'SELECT p.id, p.text, d.key FROM passages p JOIN documents d ON d.id = p.document_id WHERE p.id = ANY($1::int[])',
      [r.passages.map((p) => p.passageId)],
    );
    const top3 = r.passages.slice(0, 3).map((p) => rows.find((row) => row.id === p.passageId)!);
    expect(top3.some((p) => /\boslo\b/i.test(p.text))).toBe(true);
    expect(top3.every((p) => p.key === 'factbook/europe/no')).toBe(true);
    // nothing is embedded yet, and the answer is not empty for it
    expect(r.passages.every((p) => p.denseScore === null)).toBe(true);
  });
});
