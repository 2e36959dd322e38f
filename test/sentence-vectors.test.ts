/**
 * Sentence vectors stored with the passages: what ingest and the embedding worker
 * store, that a highlight read from them equals one encoded at query time, how a changed passage,
 * a store without them, a re-embedding job to another model and coverage treat them, and what a
 * highlighted retrieval costs in statements. The real default encoder (USE-lite) and tiny models
 * the test builds; the suite's real database (PGlite, or PostgreSQL with DATABASE_URL).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncoderSet } from '../src/encoders/set';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import type { Encoder } from '../src/encoders/types';
import { embedPending } from '../src/pipeline/embed';
import { JobWorker } from '../src/pipeline/jobs/worker';
import { finishPending } from '../src/pipeline/pending';
import { splitSentences } from '../src/retrieval/answer';
import { SPAN_TAGGER, typedSpans } from '../src/retrieval/answer-spans';
import { ANSWER_TYPES } from '../src/retrieval/answer-types';
import { AnswerHighlighter, storedSentenceLoader } from '../src/retrieval/highlight';
import { SENTENCE_VECTOR_CAP, splitHash } from '../src/retrieval/sentence-vectors';
import { getJob } from '../src/store/jobs';
import { clearFinished, pendingDocuments } from '../src/store/pending';
import { sentenceSimilarities, storedSentenceVectors } from '../src/store/sentence-embeddings';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { RecordingEncoder } from './helpers/recording-encoder';
import { writeTinyModel } from './helpers/tiny-model';

jest.setTimeout(240_000);

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created updated failed } }`;
const ASK = `query($q: String!) {
  retrieve(question: $q, k1: 10, k2: 5) {
    passages { passage { id text } answer { text start end score sentence { text start end } } }
  }
}`;

/** Twenty short sentences: more than SENTENCE_VECTOR_CAP, inside one passage (60 words, within the encoder's budget). */
const LONG = Array.from({ length: 20 }, (_, i) => `Pier ${String.fromCharCode(65 + i)} opens.`).join(' ');

const docs = [
  {
    key: 'lindesnes',
    title: 'Lindesnes Lighthouse',
    abstract: 'Lindesnes Lighthouse is the oldest lighthouse in Norway. It was first lit in 1655. The tower stands at the southern tip of the country.',
    sections: [
      { title: 'Keepers', text: 'Keepers lived at the station until 2003. Their houses are now a museum. Visitors climb the tower in summer.' },
      { title: 'Route', text: LONG },
    ],
  },
  {
    key: 'norway',
    title: 'Norway',
    sections: [{ title: 'Capital', text: 'name: Oslo. geographic coordinates: 59 55 N, 10 45 E. time difference: UTC+1.' }],
  },
  { key: 'rhine', title: 'Rhine', abstract: 'The Rhine is a river. The Rhine flows from the Alps to the North Sea, passing Basel and Cologne.' },
];

const QUESTIONS = [
  'When was Lindesnes Lighthouse first lit?',
  'What is the capital of Norway?',
  'Which cities does the Rhine pass?',
  'Where do visitors climb?',
];

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** Typed questions over the corpus: date, quantity, person and place (compromise runs for these). */
const TYPED = [
  'When was Lindesnes Lighthouse first lit?',
  'How many piers open?',
  'Who lived at the station?',
  'Where does the Rhine flow?',
  'Where is Oslo?',
  'What is the capital of Norway?',
];

/** What the writer must store for these sentences: typedSpans' output, flat, with the tagger's version. */
const expectedSpans = (texts: readonly string[]) => ({
  v: SPAN_TAGGER,
  s: texts.map((t) => typedSpans(t).flatMap((sp) => [sp.start, sp.end, ANSWER_TYPES.indexOf(sp.type)])),
});

interface PassageRow {
  id: number;
  documentId: number;
  text: string;
}

describe('sentence vectors with the default encoder', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  let recording: RecordingEncoder;
  let modelId: number;
  const passages = () => api.testDb.db.query<PassageRow>('SELECT id, document_id AS "documentId", text FROM passages ORDER BY id');
  const count = async (sql: string, params: unknown[] = []) => (await api.testDb.db.query<{ n: number }>(sql, params))[0].n;
  const storedSpans = async (passageId: number) =>
    (await api.testDb.db.query<{ spans: unknown }>('SELECT spans FROM sentence_embeddings WHERE model_id = $1 AND passage_id = $2', [modelId, passageId]))[0]
      .spans;
  /** The highlights of today's path: every sentence encoded at query time, cold. */
  const encodedHighlights = async (question: string, texts: string[]) => {
    const cold = new AnswerHighlighter({ question: encoders.byRole.questionPassage, passage: encoders.byRole.passage });
    return Promise.all(texts.map((text) => cold.highlight(question, text)));
  };

  beforeAll(async () => {
    const loaded = await EncoderSet.load();
    const useLite = loaded.byRole.passage;
    recording = new RecordingEncoder(useLite);
    encoders = EncoderSet.of({ questionDocument: useLite, document: useLite, questionPassage: useLite, passage: recording });
    // A long snapshot: the model registry reads nothing while statements are counted.
    api = await createTestApi({}, encoders, { registry: { ttlMs: 600_000 } });
    expect(dataOf(await api.exec(INGEST, { docs })).ingestDocuments).toMatchObject({ created: 3, failed: 0 });
    modelId = (await api.models!.current())!.passage.id;
  });
  afterAll(async () => {
    await api?.close();
    await encoders?.close();
  });

  it('stores the encoder’s vectors of splitSentences’ output for every passage, at most SENTENCE_VECTOR_CAP of them', async () => {
    const rows = await passages();
    const stored = await storedSentenceVectors(
      api.testDb.db,
      modelId,
      rows.map((p) => p.id),
    );
    expect(stored.size).toBe(rows.length);
    let capped = 0;
    for (const p of rows) {
      const texts = splitSentences(p.text).map((s) => s.text);
      const kept = texts.slice(0, SENTENCE_VECTOR_CAP);
      if (texts.length > kept.length) capped++;
      const { splitHash: hash, vectors } = stored.get(p.id)!;
      expect(hash).toBe(splitHash(kept));
      expect(vectors).toHaveLength(kept.length);
      const expected = (await encoders.byRole.passage.encode(kept, 'passage')).vectors;
      vectors.forEach((v, i) => {
        expect(v).toHaveLength(512);
        for (let j = 0; j < v.length; j++) expect(Math.abs(v[j] - expected[i][j])).toBeLessThan(1e-5);
      });
    }
    expect(capped).toBe(1); // the Route section's twenty sentences
  });

  it('a highlight from stored vectors equals the one encoded at query time, with the same similarities', async () => {
    const rows = await passages();
    for (const question of QUESTIONS) {
      const q = (await encoders.byRole.questionPassage.encode([question], 'questionPassage')).vectors[0];
      // The statement's inner products against the encoder's vectors, sentence by sentence.
      const similarities = await sentenceSimilarities(
        api.testDb.db,
        modelId,
        q,
        rows.map((p) => ({ passageId: p.id, documentId: p.documentId })),
      );
      for (const p of rows) {
        const texts = splitSentences(p.text)
          .map((s) => s.text)
          .slice(0, SENTENCE_VECTOR_CAP);
        const expected = (await encoders.byRole.passage.encode(texts, 'passage')).vectors.map((v) => dot(q, v));
        const got = similarities.get(p.id)!.similarities;
        expect(got).toHaveLength(expected.length);
        got.forEach((s, i) => expect(Math.abs(s - expected[i])).toBeLessThan(1e-5));
      }
      // Through the API (stored path) against today's path in this process.
      const answered = dataOf(await api.exec(ASK, { q: question })).retrieve.passages;
      expect(answered.length).toBeGreaterThan(0);
      const today = await encodedHighlights(
        question,
        answered.map((p: any) => p.passage.text),
      );
      answered.forEach((p: any, i: number) => {
        // The fields ASK selects (typed answers add answerType, spanType and truncated beside them).
        const { answerType: _a, spanType: _s, truncated: _t, ...selected } = today[i]!;
        expect({ ...p.answer, score: undefined }).toEqual({ ...selected, score: undefined });
        expect(Math.abs(p.answer.score - today[i]!.score)).toBeLessThan(1e-5);
      });
    }
    // The lighthouse question lands on its passage with a highlight inside it.
    const lit = dataOf(await api.exec(ASK, { q: QUESTIONS[0] })).retrieve.passages.find((p: any) => p.passage.text.startsWith('Lindesnes'));
    expect(lit.passage.text.slice(lit.answer.start, lit.answer.end)).toBe(lit.answer.text);
  });

  it('stores the typed spans of the stored sentences; a highlight from them equals one tagged at query time, and reads them', async () => {
    const db = api.testDb.db;
    const rows = await passages();
    for (const p of rows)
      expect(await storedSpans(p.id)).toEqual(
        expectedSpans(
          splitSentences(p.text)
            .slice(0, SENTENCE_VECTOR_CAP)
            .map((s) => s.text),
        ),
      );
    const highlightAll = async (question: string) => {
      const q = (await encoders.byRole.questionPassage.encode([question], 'questionPassage')).vectors[0];
      const highlighter = new AnswerHighlighter({ question: encoders.byRole.questionPassage, passage: recording });
      const loader = storedSentenceLoader(db);
      return Promise.all(rows.map((p) => highlighter.highlight(question, p.text, q, { loader, modelId, passageId: p.id, documentId: p.documentId })));
    };
    const fromTags = await Promise.all(TYPED.map(highlightAll));
    // Typed spans were chosen (the questions exercise the stored tags, not only the sentence choice).
    expect(fromTags.flat().filter((a) => a && a.spanType !== null && a.text !== a.sentence.text).length).toBeGreaterThan(3);
    const saved = await db.query<{ passageId: number; spans: unknown }>(
      'SELECT passage_id AS "passageId", spans FROM sentence_embeddings WHERE model_id = $1',
      [modelId],
    );
    const restore = () =>
      db.query(
        'UPDATE sentence_embeddings s SET spans = u.spans::jsonb FROM unnest($2::int[], $3::text[]) AS u(passage_id, spans) WHERE s.model_id = $1 AND s.passage_id = u.passage_id',
        [modelId, saved.map((r) => r.passageId), saved.map((r) => JSON.stringify(r.spans))],
      );
    try {
      // Rows without spans (written before 0019) and rows of another tagger version: query-time tagging, the same highlights.
      await db.query('UPDATE sentence_embeddings SET spans = NULL WHERE model_id = $1', [modelId]);
      expect(await Promise.all(TYPED.map(highlightAll))).toEqual(fromTags);
      await restore();
      await db.query(`UPDATE sentence_embeddings SET spans = jsonb_set(spans, '{v}', to_jsonb($2::int)) WHERE model_id = $1`, [modelId, SPAN_TAGGER + 1]);
      expect(await Promise.all(TYPED.map(highlightAll))).toEqual(fromTags);
      // Stored spans are what a highlight reads: with every sentence stored as span-less, no typed phrase is chosen.
      await db.query(
        `UPDATE sentence_embeddings SET spans = jsonb_build_object('v', $2::int, 's', (SELECT coalesce(jsonb_agg('[]'::jsonb), '[]') FROM jsonb_array_elements(spans->'s'))) WHERE model_id = $1`,
        [modelId, SPAN_TAGGER],
      );
      const untagged = (await Promise.all(TYPED.map(highlightAll))).flat();
      expect(
        untagged.filter((a) => a && a.spanType !== null && ['date', 'quantity', 'person', 'place'].includes(a.spanType) && a.text !== a.sentence.text),
      ).toEqual([]);
    } finally {
      await restore();
    }
    expect(await Promise.all(TYPED.map(highlightAll))).toEqual(fromTags);
  });

  it('a highlighted retrieval costs three statements (the lookup of the names the question holds, the search, one read of the sentence similarities) and encodes no sentence', async () => {
    const ask = `{ retrieve(question: "Which cities does the Rhine pass?", k1: 10, k2: 5) { passages { answer { text } } } }`;
    dataOf(await api.exec(ask)); // the connection's search settings are sent once, on the first search
    const before = api.testDb.db.statements.count;
    recording.encoded = [];
    const { passages: got } = dataOf(await api.exec(ask)).retrieve;
    expect(got).toHaveLength(5);
    // The name lookup (titleLinkDense, retrieval/question-names.ts) runs beside the question's encoding.
    expect(api.testDb.db.statements.count - before).toBe(3);
    // The passage encoder was not asked for anything: the question's vector came from its own encoder.
    expect(recording.encoded).toEqual([]);
  });

  it('a passage with more sentences than the cap encodes only the rest, and gets the same highlight', async () => {
    const [route] = (await passages()).filter((p) => splitSentences(p.text).length > SENTENCE_VECTOR_CAP);
    const question = 'Which pier opens last?';
    const q = (await encoders.byRole.questionPassage.encode([question], 'questionPassage')).vectors[0];
    recording.encoded = [];
    const highlighter = new AnswerHighlighter({ question: encoders.byRole.questionPassage, passage: recording });
    const stored = { loader: storedSentenceLoader(api.testDb.db), modelId, passageId: route.id, documentId: route.documentId };
    const answer = await highlighter.highlight(question, route.text, q, stored);
    const texts = splitSentences(route.text).map((s) => s.text);
    expect(recording.encoded).toEqual(texts.slice(SENTENCE_VECTOR_CAP));
    const [today] = await encodedHighlights(question, [route.text]);
    expect({ ...answer, score: undefined }).toEqual({ ...today, score: undefined });
    expect(Math.abs(answer!.score - today!.score)).toBeLessThan(1e-5);
  });

  it('falls back to encoding for a passage without stored vectors or split otherwise, and embedding fills them in without re-encoding the passage', async () => {
    const rows = await passages();
    const [rhine] = rows.filter((p) => p.text.startsWith('The Rhine'));
    const [keepers] = rows.filter((p) => p.text.startsWith('Keepers'));
    const db = api.testDb.db;
    const coverageOf = async () =>
      dataOf(await api.exec(`{ retrieve(question: "river", k2: 1) { coverage { passages { total embedded sentenceVectors } } } }`)).retrieve.coverage.passages;
    expect(await coverageOf()).toEqual({ total: rows.length, embedded: rows.length, sentenceVectors: rows.length });

    // A store embedded before sentence vectors: no row. A split that changed since: another hash.
    await db.query('DELETE FROM sentence_embeddings WHERE passage_id = $1', [rhine.id]);
    await db.query(`UPDATE sentence_embeddings SET split_hash = 'other' WHERE passage_id = $1`, [keepers.id]);
    expect(await coverageOf()).toEqual({ total: rows.length, embedded: rows.length, sentenceVectors: rows.length - 1 });
    expect(dataOf(await api.exec(`{ embeddingModels { name passages sentencePassages } }`)).embeddingModels).toEqual([
      { name: 'use-lite', passages: rows.length, sentencePassages: rows.length - 1 },
    ]);

    for (const [p, question] of [
      [rhine, QUESTIONS[2]],
      [keepers, QUESTIONS[3]],
    ] as const) {
      const q = (await encoders.byRole.questionPassage.encode([question], 'questionPassage')).vectors[0];
      recording.encoded = [];
      const highlighter = new AnswerHighlighter({ question: encoders.byRole.questionPassage, passage: recording });
      const answer = await highlighter.highlight(question, p.text, q, { loader: storedSentenceLoader(db), modelId, passageId: p.id, documentId: p.documentId });
      expect(recording.encoded).toEqual(splitSentences(p.text).map((s) => s.text));
      const [today] = await encodedHighlights(question, [p.text]);
      expect({ ...answer, score: undefined }).toEqual({ ...today, score: undefined });
    }

    // `dhr embed` (embedPending): the missing row comes back; only its sentences are encoded, not
    // the passage (its vector is there). A hash it cannot check in SQL stays for a job of scope ALL.
    recording.encoded = [];
    const targets = (await api.models!.current())!;
    expect(await embedPending(db, targets)).toMatchObject({ documents: 0, passages: 1 });
    expect(recording.encoded).toEqual(splitSentences(rhine.text).map((s) => s.text));
    expect(await coverageOf()).toEqual({ total: rows.length, embedded: rows.length, sentenceVectors: rows.length });
    expect(await embedPending(db, targets)).toMatchObject({ documents: 0, passages: 0 });
  });

  it('a document whose sentence vectors are missing stays pending until the finisher writes them', async () => {
    const db = api.testDb.db;
    const [norway] = await db.query<{ id: number; passages: number }>(
      `SELECT d.id, (SELECT count(*)::int FROM passages p WHERE p.document_id = d.id) AS passages FROM documents d WHERE key = 'norway'`,
    );
    // As a process killed between the passages' statement and their sentences' leaves it.
    await db.query('DELETE FROM sentence_embeddings WHERE document_id = $1', [norway.id]);
    await db.query('INSERT INTO pending_documents (document_id) VALUES ($1) ON CONFLICT (document_id) DO NOTHING', [norway.id]);
    expect(await clearFinished(db, await pendingDocuments(db, { documentIds: [norway.id] }))).toBe(0);
    const targets = (await api.models!.current())!;
    const done = await finishPending(db, { documentIds: [norway.id], embedWith: async () => targets });
    expect(done).toMatchObject({ cleared: 1, embedded: { documents: 0, passages: norway.passages } });
    expect(await count('SELECT count(*)::int AS n FROM sentence_embeddings WHERE document_id = $1', [norway.id])).toBe(norway.passages);
    expect(await count('SELECT count(*)::int AS n FROM pending_documents')).toBe(0);
  });

  it('a changed passage gets new sentence vectors; the old ones go with the old passage', async () => {
    const db = api.testDb.db;
    const before = await passages();
    const changed = { ...docs[2], abstract: 'The Rhine is a long river. It reaches the sea at Rotterdam.' };
    expect(dataOf(await api.exec(INGEST, { docs: [changed] })).ingestDocuments).toMatchObject({ updated: 1, failed: 0 });
    const after = await passages();
    const [rhine] = after.filter((p) => p.text.startsWith('The Rhine'));
    expect(before.some((p) => p.id === rhine.id)).toBe(false);
    const stored = (await storedSentenceVectors(db, modelId, [rhine.id])).get(rhine.id)!;
    const texts = splitSentences(rhine.text).map((s) => s.text);
    expect(texts).toEqual(['The Rhine is a long river.', 'It reaches the sea at Rotterdam.']);
    expect(stored.splitHash).toBe(splitHash(texts));
    const expected = (await encoders.byRole.passage.encode(texts, 'passage')).vectors;
    stored.vectors.forEach((v, i) => expect(dot(v, expected[i])).toBeGreaterThan(0.99999));
    expect(await storedSpans(rhine.id)).toEqual(expectedSpans(texts));
    // One row per passage there is now: none left behind by the replaced passage.
    expect(await count('SELECT count(*)::int AS n FROM sentence_embeddings WHERE model_id = $1', [modelId])).toBe(after.length);
    expect(await count('SELECT count(*)::int AS n FROM sentence_embeddings s LEFT JOIN passages p ON p.id = s.passage_id WHERE p.id IS NULL')).toBe(0);
  });
});

describe('sentence vectors and re-embedding jobs', () => {
  const REGISTER = `mutation($path: String!) { registerEmbeddingModel(path: $path) { name } }`;
  const REEMBED = `mutation($model: String!, $scope: ReembedScope) { reembed(model: $model, scope: $scope) { id passages { total } } }`;
  let root: string;
  let api: TestApi;
  let tinyA: Encoder;
  let worker: JobWorker;
  const db = () => api.testDb.db;
  const count = async (sql: string, params: unknown[] = []) => (await db().query<{ n: number }>(sql, params))[0].n;
  const runJob = async (id: string) => {
    await worker.run({ until: async () => ['succeeded', 'failed', 'cancelled'].includes((await getJob(db(), Number(id)))!.status) });
    return getJob(db(), Number(id));
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dhr-sentences-'));
    tinyA = await TransformerEncoder.load(await writeTinyModel(root, 'tiny-a', { seed: 1 }));
    await writeTinyModel(root, 'tiny-b', { seed: 2 });
    api = await createTestApi(
      { JOB_BATCH_SIZE: '3', MODELS_DIR: root },
      EncoderSet.of({ questionDocument: tinyA, document: tinyA, questionPassage: tinyA, passage: tinyA }),
    );
    worker = new JobWorker(db(), api.models!, { batchSize: 3, pollMs: 10 });
    const corpus = Array.from({ length: 4 }, (_, i) => ({
      key: `doc-${i}`,
      title: `the river ${i}`,
      abstract: `Berlin is a city. The capital of france is paris. North and south border ${i}.`,
      sections: [{ title: 'capital', text: `The largest mountain. What country is passage ${i}.` }],
    }));
    expect(dataOf(await api.exec(INGEST, { docs: corpus })).ingestDocuments).toMatchObject({ created: 4, failed: 0 });
  });
  afterAll(async () => {
    await api?.close();
    await api?.models?.close();
    await tinyA?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a job to a second model stores that model’s sentence vectors; STALE fills in missing ones; dropping the model removes them', async () => {
    const rows = await db().query<PassageRow>('SELECT id, document_id AS "documentId", text FROM passages ORDER BY id');
    dataOf(await api.exec(REGISTER, { path: 'tiny-b' }));
    const job = dataOf(await api.exec(REEMBED, { model: 'tiny-b', scope: 'ALL' })).reembed;
    expect(await runJob(job.id)).toMatchObject({ status: 'succeeded', passagesDone: rows.length, passagesTotal: rows.length });

    const [{ id: modelB }] = await db().query<{ id: number }>(`SELECT id FROM embedding_models WHERE name = 'tiny-b'`);
    const b = await TransformerEncoder.load(join(root, 'tiny-b'));
    try {
      const stored = await storedSentenceVectors(
        db(),
        modelB,
        rows.map((p) => p.id),
      );
      expect(stored.size).toBe(rows.length);
      for (const p of rows) {
        const texts = splitSentences(p.text).map((s) => s.text);
        expect(texts.length).toBeGreaterThan(1);
        const expected = (await b.encode(texts, 'passage')).vectors;
        const { splitHash: hash, vectors } = stored.get(p.id)!;
        expect(hash).toBe(splitHash(texts));
        expect(vectors).toHaveLength(texts.length);
        const [{ spans }] = await db().query<{ spans: unknown }>('SELECT spans FROM sentence_embeddings WHERE model_id = $1 AND passage_id = $2', [
          modelB,
          p.id,
        ]);
        expect(spans).toEqual(expectedSpans(texts));
        vectors.forEach((v, i) => {
          expect(v).toHaveLength(8);
          for (let j = 0; j < v.length; j++) expect(Math.abs(v[j] - expected[i][j])).toBeLessThan(1e-5);
        });
      }
    } finally {
      await b.close();
    }
    expect(dataOf(await api.exec(`{ embeddingModels { name sentencePassages } }`)).embeddingModels).toEqual([
      { name: 'tiny-a', sentencePassages: rows.length },
      { name: 'tiny-b', sentencePassages: rows.length },
    ]);

    // Two passages lose their sentence vectors (as in a store embedded before they existed): a STALE
    // job plans exactly those and leaves their passage vectors as they were.
    const gone = rows.slice(0, 2).map((p) => p.id);
    await db().query('DELETE FROM sentence_embeddings WHERE model_id = $1 AND passage_id = ANY($2::int[])', [modelB, gone]);
    const stamps = await db().query<{ at: string }>(`SELECT embedded_at::text AS at FROM passage_embeddings WHERE model_id = $1 ORDER BY passage_id`, [modelB]);
    const stale = dataOf(await api.exec(REEMBED, { model: 'tiny-b', scope: 'STALE' })).reembed;
    expect(stale.passages.total).toBe(2);
    expect(await runJob(stale.id)).toMatchObject({ status: 'succeeded', passagesDone: 2, passagesTotal: 2 });
    expect(await count('SELECT count(*)::int AS n FROM sentence_embeddings WHERE model_id = $1', [modelB])).toBe(rows.length);
    expect(await db().query(`SELECT embedded_at::text AS at FROM passage_embeddings WHERE model_id = $1 ORDER BY passage_id`, [modelB])).toEqual(stamps);

    // The switch: retrieval's highlights now read tiny-b's rows (coverage counts them for it).
    dataOf(await api.exec(`mutation { activateEmbeddingModel(model: "tiny-b") { name } }`));
    const { coverage } = dataOf(
      await api.exec(`{ retrieve(question: "capital of france", k2: 2) { coverage { passages { total sentenceVectors } } passages { answer { text } } } }`),
    ).retrieve;
    expect(coverage.passages).toEqual({ total: rows.length, sentenceVectors: rows.length });
    dataOf(await api.exec(`mutation { dropEmbeddingModel(model: "tiny-a") }`));
    expect(await count('SELECT count(*)::int AS n FROM sentence_embeddings')).toBe(rows.length);
  });
});
