/**
 * Stored sentence vectors and their typed spans (migrations 0018, 0019) on Citus: written by the
 * embedding step on a distributed store, read back in the highlight's one statement, and the
 * highlights equal to those of a single server and to query-time tagging. A deterministic
 * hashing encoder (8-d): the vectors only need to agree between the two stores.
 */
import type { Encoder } from '../../src/encoders/types';
import { DEFAULT_INGEST_OPTIONS } from '../../src/ingest/types';
import { encodePassages } from '../../src/pipeline/encode';
import { ingest } from '../../src/pipeline/ingest';
import { splitSentences } from '../../src/retrieval/answer';
import { SPAN_TAGGER, typedSpans } from '../../src/retrieval/answer-spans';
import { ANSWER_TYPES } from '../../src/retrieval/answer-types';
import { AnswerHighlighter, storedSentenceLoader } from '../../src/retrieval/highlight';
import type { Database } from '../../src/store/db';
import { registerModel } from '../../src/store/embeddings';
import { createCitusDatabase, createSingleDatabase } from '../helpers/citus';

const DIM = 8;
/** A unit vector from the text's character codes: the same text, the same vector, in any process. */
function hashed(text: string): Float32Array {
  const v = new Float32Array(DIM);
  for (let i = 0; i < text.length; i++) v[(i * 7 + text.charCodeAt(i)) % DIM] += (text.charCodeAt(i) % 13) - 6;
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
const encoder: Encoder = {
  name: 'hashed-8',
  runtime: 'onnxruntime-node',
  dimension: DIM,
  checksum: 'hashed-8'.padEnd(64, '0'),
  normalized: true,
  maxTokens: () => 128,
  countTokens: (text: string) => text.split(/\s+/).filter(Boolean).length,
  encode: async (texts: readonly string[]) => ({ vectors: texts.map(hashed), stats: { texts: texts.length, tokens: 0, truncated: 0 } }),
  close: async () => undefined,
};

const DOCS = [
  {
    key: 'light',
    title: 'Lindesnes Lighthouse',
    abstract: 'Lindesnes Lighthouse is the oldest lighthouse in Norway. It was first lit in 1655. Keepers lived there until 2003.',
  },
  {
    key: 'uganda',
    title: 'Uganda',
    abstract: 'President Yoweri Museveni has led Uganda since 1986. About 45 million people live in Kampala and the Nile valley.',
  },
  { key: 'gdp', title: 'Economy', abstract: 'GDP grew by about 3.5% of GDP in 2014, to US$40 billion. Exports fell.' },
];
const QUESTIONS = ['When was the lighthouse first lit?', 'How many people live in Kampala?', 'Who has led Uganda?', 'Where do people live?'];

async function highlights(db: Database, spans: boolean) {
  await ingest(db, DOCS, { ...DEFAULT_INGEST_OPTIONS, concurrency: 1 });
  const model = await registerModel(db, encoder);
  const passages = await db.query<{ id: number; documentId: number; text: string; titlePath: string[] }>(
    'SELECT id, document_id AS "documentId", text, title_path AS "titlePath" FROM passages ORDER BY id',
  );
  await encodePassages(db, encoder, model, passages);
  const stored = await db.query<{ text: string; spans: unknown }>(
    'SELECT p.text, s.spans FROM sentence_embeddings s JOIN passages p ON p.document_id = s.document_id AND p.id = s.passage_id WHERE s.model_id = $1 ORDER BY p.id',
    [model.id],
  );
  const out = [];
  for (const q of QUESTIONS) {
    const highlighter = new AnswerHighlighter({ question: encoder, passage: encoder });
    const loader = storedSentenceLoader(db, { spans });
    out.push(
      await Promise.all(
        passages.map((p) => highlighter.highlight(q, p.text, hashed(q), { loader, modelId: model.id, passageId: p.id, documentId: p.documentId })),
      ),
    );
  }
  return { stored, answers: out };
}

describe('Citus: stored sentence spans', () => {
  it('are written and read on the distributed store, and give the highlights of one server and of query-time tagging', async () => {
    const citus = await createCitusDatabase();
    const single = await createSingleDatabase();
    try {
      const onCitus = await highlights(citus.db, true);
      expect(onCitus.stored).toHaveLength(DOCS.length);
      for (const row of onCitus.stored) {
        const texts = splitSentences(row.text).map((s) => s.text);
        expect(row.spans).toEqual({ v: SPAN_TAGGER, s: texts.map((t) => typedSpans(t).flatMap((sp) => [sp.start, sp.end, ANSWER_TYPES.indexOf(sp.type)])) });
      }
      const typed = onCitus.answers.flat().filter((a) => a && a.spanType !== null && a.text !== a.sentence.text);
      expect(typed.length).toBeGreaterThan(3);
      expect((await highlights(single.db, true)).answers).toEqual(onCitus.answers);
      // The same highlights when the stored spans are not read (sentences tagged at query time).
      const untagged = new AnswerHighlighter({ question: encoder, passage: encoder });
      const model = (await citus.db.query<{ id: number }>(`SELECT id FROM embedding_models WHERE name = 'hashed-8'`))[0].id;
      const passages = await citus.db.query<{ id: number; documentId: number; text: string }>(
        'SELECT id, document_id AS "documentId", text FROM passages ORDER BY id',
      );
      for (const [i, q] of QUESTIONS.entries()) {
        const loader = storedSentenceLoader(citus.db, { spans: false });
        const got = await Promise.all(
          passages.map((p) => untagged.highlight(q, p.text, hashed(q), { loader, modelId: model, passageId: p.id, documentId: p.documentId })),
        );
        expect(got).toEqual(onCitus.answers[i]);
      }
    } finally {
      await citus.drop();
      await single.drop();
    }
  });
});
