import { EncoderSet } from '../src/encoders/set';
import { UseLiteEncoder } from '../src/encoders/use-lite/encoder';
import { passageEncodingText } from '../src/ingest/summary';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { embedPending, prepareEmbedding } from '../src/pipeline/embed';
import { summaryPieces } from '../src/pipeline/summary-pieces';
import {
  EmbeddingModelError,
  pendingDocuments,
  pendingPassages,
  registerModel,
  writeDocumentEmbeddings,
  writePassageEmbeddings,
} from '../src/store/embeddings';
import type { Queryable } from '../src/store/db';
import { storedSentenceVectors, writeSentenceEmbeddings } from '../src/store/sentence-embeddings';
import { ingest, ingestDocuments } from '../src/pipeline/ingest';
import { useTestDatabase } from './helpers/database';
import { prng } from './helpers/prng';
import { RecordingEncoder } from './helpers/recording-encoder';

const docs = [
  {
    key: 'berlin',
    title: 'Berlin',
    abstract: 'Berlin is the capital of Germany.',
    sections: [
      { title: 'History', text: 'Berlin was divided by a wall from 1961 to 1989.' },
      { title: 'Geography', text: 'The Spree river flows through the city.' },
    ],
  },
  { key: 'paris', title: 'Paris', abstract: 'Paris is the capital of France.', sections: [{ title: 'Art', text: 'The Louvre is a museum.' }] },
  { key: 'oslo', title: 'Oslo', text: 'Oslo is the capital of Norway, at the head of a fjord.' },
];

function parseVector(text: string): number[] {
  return JSON.parse(text) as number[];
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

describe('embedding pipeline with the default model', () => {
  const t = useTestDatabase({ each: true });
  let useLite: UseLiteEncoder;
  let counting: RecordingEncoder;
  let set: EncoderSet;

  beforeAll(async () => {
    useLite = await UseLiteEncoder.load();
  });
  afterAll(() => useLite.close());

  beforeEach(async () => {
    counting = new RecordingEncoder(useLite);
    set = EncoderSet.of({ questionDocument: counting, document: counting, questionPassage: counting, passage: counting });
    await ingestDocuments(t.db, docs, DEFAULT_INGEST_OPTIONS);
  });

  it('registers the model once with its own partial HNSW indexes (inner product)', async () => {
    const first = await prepareEmbedding(t.db, set);
    const again = await prepareEmbedding(t.db, set);
    expect(again.document.id).toBe(first.document.id);
    expect(first.document).toMatchObject({ name: 'use-lite', dimension: 512, runtime: 'onnxruntime-node' });
    const indexes = await t.db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE '%hnsw_m${first.document.id}' ORDER BY indexname`,
    );
    expect(indexes.map((i) => i.indexname)).toEqual([`document_embeddings_hnsw_m${first.document.id}`, `passage_embeddings_hnsw_m${first.document.id}`]);
    for (const i of indexes) {
      expect(i.indexdef).toMatch(/USING hnsw \(\(\(?embedding\)?::vector\(512\)\) vector_ip_ops\)/);
      expect(i.indexdef).toMatch(new RegExp(`WHERE \\(model_id = ${first.document.id}\\)`));
    }
  });

  it('embeds document summaries and title-path passages, exactly as the encoder computes them', async () => {
    const targets = await prepareEmbedding(t.db, set);
    const summary = await embedPending(t.db, targets, { batchSize: 2 });
    const [{ passages }] = await t.db.query<{ passages: number }>('SELECT count(*)::int AS passages FROM passages');
    expect(summary).toMatchObject({ documents: 3, passages, truncated: 0 });

    // By key, not id: on PostgreSQL the documents are written four at once, so ids need not follow the batch.
    const rows = await t.db.query<{ summary: string; embedding: string }>(
      `SELECT d.summary, e.embedding::text AS embedding FROM document_embeddings e JOIN documents d ON d.id = e.document_id
       WHERE e.model_id = $1 ORDER BY d.key`,
      [targets.document.id],
    );
    const expected = await useLite.encode(
      rows.map((r) => r.summary),
      'document',
    );
    rows.forEach((r, i) => expect(dot(parseVector(r.embedding), expected.vectors[i])).toBeGreaterThan(0.99999));
    expect(rows[0].summary).toBe('Berlin, Berlin is the capital of Germany., History, Geography');

    const passageRows = await t.db.query<{ text: string; titlePath: string[]; embedding: string }>(
      `SELECT p.text, p.title_path AS "titlePath", e.embedding::text AS embedding
       FROM passage_embeddings e JOIN passages p ON p.id = e.passage_id JOIN documents d ON d.id = p.document_id
       WHERE e.model_id = $1 ORDER BY d.key, p.id`,
      [targets.passage.id],
    );
    expect(passageRows).toHaveLength(passages);
    const texts = passageRows.map(passageEncodingText);
    expect(texts[1]).toBe('Berlin, History, Berlin was divided by a wall from 1961 to 1989.');
    const expectedPassages = await useLite.encode(texts, 'passage');
    passageRows.forEach((r, i) => expect(dot(parseVector(r.embedding), expectedPassages.vectors[i])).toBeGreaterThan(0.99999));

    // The stored vectors answer a nearest-neighbour query through the model's HNSW index.
    const [question] = (await useLite.encode(['Which river flows through Berlin?'], 'questionPassage')).vectors;
    const hits = await t.db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const plan = await tx.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT passage_id FROM passage_embeddings WHERE model_id = ${targets.passage.id}
         ORDER BY embedding::vector(512) <#> $1::vector(512) LIMIT 1`,
        [JSON.stringify(Array.from(question))],
      );
      const nearest = await tx.query<{ text: string }>(
        `SELECT p.text FROM passage_embeddings e JOIN passages p ON p.id = e.passage_id WHERE e.model_id = ${targets.passage.id}
         ORDER BY e.embedding::vector(512) <#> $1::vector(512) LIMIT 1`,
        [JSON.stringify(Array.from(question))],
      );
      return { plan: plan.map((r) => r['QUERY PLAN']).join('\n'), nearest };
    });
    expect(hits.plan).toMatch(new RegExp(`passage_embeddings_hnsw_m${targets.passage.id}`));
    expect(hits.nearest[0].text).toBe('The Spree river flows through the city.');
  });

  it('embeds a summary over the budget also in pieces that fit it (several summary vectors); one that fits has none', async () => {
    const sections = Array.from({ length: 60 }, (_, i) => ({ title: `Topic ${i} of the long guide`, text: `Words about topic ${i}.` }));
    await ingestDocuments(t.db, [{ key: 'guide', title: 'Guide', abstract: 'A guide with a long table of contents.', sections }], DEFAULT_INGEST_OPTIONS);
    const targets = await prepareEmbedding(t.db, set);
    await embedPending(t.db, targets);
    const rows = await t.db.query<{ key: string; summary: string; pieces: string | null }>(
      `SELECT d.key, d.summary, e.summary_pieces::text AS pieces FROM document_embeddings e JOIN documents d ON d.id = e.document_id
       WHERE e.model_id = $1 ORDER BY d.id`,
      [targets.document.id],
    );
    const budget = useLite.maxTokens('document');
    for (const r of rows.filter((x) => x.key !== 'guide')) expect(r.pieces).toBeNull();
    const guide = rows.find((r) => r.key === 'guide')!;
    expect(counting.countTokens(guide.summary, 'document')).toBeGreaterThan(budget);
    const texts = summaryPieces(useLite, 'Guide', guide.summary);
    expect(texts.length).toBeGreaterThan(1);
    // every piece is "title, …", fits the budget, and together they hold every word after the title
    for (const text of texts) {
      expect(text.startsWith('Guide, ')).toBe(true);
      expect(counting.countTokens(text, 'document')).toBeLessThanOrEqual(budget);
    }
    expect(texts.map((x) => x.slice('Guide, '.length)).join(' ')).toBe(guide.summary.slice('Guide, '.length).replace(/\s+/g, ' '));
    const stored = JSON.parse(`[${guide.pieces!.slice(1, -1).replace(/"/g, '')}]`) as number[][];
    expect(stored).toHaveLength(texts.length);
    const expected = await useLite.encode(texts, 'document');
    stored.forEach((v, i) => expect(dot(v, expected.vectors[i])).toBeGreaterThan(0.99999));
  });

  it('re-embeds only what changed; unchanged documents are not encoded again', async () => {
    const targets = await prepareEmbedding(t.db, set);
    await embedPending(t.db, targets);
    counting.encoded = [];
    expect(await embedPending(t.db, targets)).toMatchObject({ documents: 0, passages: 0 });
    await ingestDocuments(t.db, docs, DEFAULT_INGEST_OPTIONS); // unchanged: no-op
    expect(await embedPending(t.db, targets)).toMatchObject({ documents: 0, passages: 0 });
    expect(counting.encoded).toEqual([]);

    const changed = { ...docs[1], sections: [{ title: 'Art', text: 'The Louvre is the largest art museum.' }] };
    await ingestDocuments(t.db, [changed], DEFAULT_INGEST_OPTIONS);
    const [{ stale }] = await t.db.query<{ stale: number }>(
      `SELECT count(*)::int AS stale FROM document_embeddings e JOIN documents d ON d.id = e.document_id
       WHERE e.content_hash <> d.content_hash`,
    );
    expect(stale).toBe(1);
    const summary = await embedPending(t.db, targets);
    expect(summary).toMatchObject({ documents: 1, passages: 2 });
    expect(counting.encoded).toEqual([
      'Paris, Paris is the capital of France., Art',
      'Paris, Paris is the capital of France.',
      'Paris, Art, The Louvre is the largest art museum.',
      // the new passages' sentences, for answer highlights (one call after the passages')
      'Paris is the capital of France.',
      'The Louvre is the largest art museum.',
    ]);
    const [{ n }] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM passage_embeddings e LEFT JOIN passages p ON p.id = e.passage_id WHERE p.id IS NULL`,
    );
    expect(n).toBe(0);
  });

  it('never stores a vector under a hash its document no longer has', async () => {
    const targets = await prepareEmbedding(t.db, set);
    const [doc] = await t.db.query<{ id: number; contentHash: string }>(`SELECT id, content_hash AS "contentHash" FROM documents WHERE key = 'oslo'`);
    const vector = (await useLite.encode(['x'], 'document')).vectors[0];
    expect(await writeDocumentEmbeddings(t.db, targets.document, [{ documentId: doc.id, contentHash: 'old-hash', vector }])).toBe(0);
    await expect(
      writeDocumentEmbeddings(t.db, targets.document, [{ documentId: doc.id, contentHash: doc.contentHash, vector: vector.slice(0, 10) }]),
    ).rejects.toThrow(/stores 512-d vectors, got one of 10/);
  });

  it('keeps several models side by side and deletes embeddings with their document', async () => {
    const other = new RecordingEncoder(useLite, 'use-lite-second', 'f'.repeat(64));
    const targetsA = await prepareEmbedding(t.db, set);
    const targetsB = await prepareEmbedding(t.db, EncoderSet.of({ questionDocument: other, document: other, questionPassage: other, passage: other }));
    expect(targetsB.document.id).not.toBe(targetsA.document.id);
    await embedPending(t.db, targetsA);
    expect(await embedPending(t.db, targetsB)).toMatchObject({ documents: 3 });
    const counts = await t.db.query<{ model: string; d: number; p: number }>(
      `SELECT m.name AS model, (SELECT count(*)::int FROM document_embeddings e WHERE e.model_id = m.id) AS d,
              (SELECT count(*)::int FROM passage_embeddings e WHERE e.model_id = m.id) AS p
       FROM embedding_models m ORDER BY m.id`,
    );
    expect(counts.map((c) => [c.model, c.d])).toEqual([
      ['use-lite', 3],
      ['use-lite-second', 3],
    ]);
    expect(counts[0].p).toBe(counts[1].p);

    await t.db.query(`DELETE FROM documents WHERE key = 'berlin'`);
    const [{ d, p }] = await t.db.query<{ d: number; p: number }>(
      `SELECT (SELECT count(*)::int FROM document_embeddings) AS d, (SELECT count(*)::int FROM passage_embeddings) AS p`,
    );
    expect(d).toBe(4);
    expect(p).toBe(2 * (counts[0].p - 3));
  });

  it('stores every float of every vector exactly as given (one binary real[] a batch), pieces and sentences in their rows and order', async () => {
    const targets = await prepareEmbedding(t.db, set);
    const random = prng(7);
    // Float32 values over the whole range: tiny, huge, negative, subnormal, signed zero.
    const special = [1e-30, -3.4e38, 1.17549435e-38, 1e-45, -0, 0.1, 123456.789];
    const make = () => Float32Array.from({ length: 512 }, (_, i) => (i < special.length ? special[i] : (random() - 0.5) * 10 ** Math.floor(random() * 8 - 4)));
    const documents = await t.db.query<{ id: number; contentHash: string }>('SELECT id, content_hash AS "contentHash" FROM documents ORDER BY id');
    const passages = await t.db.query<{ id: number; documentId: number }>('SELECT id, document_id AS "documentId" FROM passages ORDER BY id');
    // pieces: 2, none, 3 (rows of other lengths around each other)
    const pieceCounts = [2, 0, 3];
    const documentRows = documents.map((d, i) => ({
      documentId: d.id,
      contentHash: d.contentHash,
      vector: make(),
      pieces: pieceCounts[i] ? Array.from({ length: pieceCounts[i] }, make) : undefined,
    }));
    expect(await writeDocumentEmbeddings(t.db, targets.document, documentRows)).toBe(documents.length);
    const passageRows = passages.map((p) => ({ passageId: p.id, documentId: p.documentId, vector: make() }));
    expect(await writePassageEmbeddings(t.db, targets.passage, passageRows)).toBe(passages.length);
    const sentenceRows = passages.map((p, i) => ({
      passageId: p.id,
      documentId: p.documentId,
      splitHash: `h${i}`,
      vectors: Array.from({ length: [1, 0, 3][i % 3] }, make),
    }));
    await writeSentenceEmbeddings(t.db, targets.passage, sentenceRows);

    // pgvector prints the shortest decimal that reads back as the same float4
    const same = (text: string, expected: Float32Array) => {
      const got = parseVector(text);
      expect(got).toHaveLength(expected.length);
      const differing = got.map((x, i) => (Object.is(Math.fround(x), expected[i]) || (x === 0 && expected[i] === 0) ? -1 : i)).filter((i) => i >= 0);
      expect(differing).toEqual([]);
    };
    const storedDocuments = await t.db.query<{ id: number; e: string; pieces: string[] | null }>(
      'SELECT document_id AS id, embedding::text AS e, summary_pieces::text[] AS pieces FROM document_embeddings WHERE model_id = $1 ORDER BY document_id',
      [targets.document.id],
    );
    expect(storedDocuments.map((d) => d.id)).toEqual(documentRows.map((d) => d.documentId));
    storedDocuments.forEach((d, i) => {
      same(d.e, documentRows[i].vector);
      if (!documentRows[i].pieces) expect(d.pieces).toBeNull();
      else {
        expect(d.pieces).toHaveLength(documentRows[i].pieces!.length);
        d.pieces!.forEach((piece, j) => same(piece, documentRows[i].pieces![j]));
      }
    });
    const storedPassages = await t.db.query<{ id: number; e: string }>(
      'SELECT passage_id AS id, embedding::text AS e FROM passage_embeddings WHERE model_id = $1 ORDER BY passage_id',
      [targets.passage.id],
    );
    expect(storedPassages.map((p) => p.id)).toEqual(passageRows.map((p) => p.passageId));
    storedPassages.forEach((p, i) => same(p.e, passageRows[i].vector));
    const storedSentences = await storedSentenceVectors(
      t.db,
      targets.passage.id,
      passages.map((p) => p.id),
    );
    for (const row of sentenceRows) {
      const stored = storedSentences.get(row.passageId);
      expect(stored?.splitHash).toBe(row.splitHash);
      expect(stored?.vectors).toHaveLength(row.vectors.length);
      stored?.vectors.forEach((v, j) => same(`[${Array.from(v).join(',')}]`, row.vectors[j]));
    }

    // a NaN is refused by the store and the batch writes nothing
    const bad = make();
    bad[100] = NaN;
    await t.db.query('DELETE FROM passage_embeddings');
    await expect(writePassageEmbeddings(t.db, targets.passage, [passageRows[0], { ...passageRows[1], vector: bad }])).rejects.toThrow(/NaN/);
    expect(await t.db.query('SELECT 1 FROM passage_embeddings')).toHaveLength(0);
  });

  it('reads the next batch to embed by probing rows, never by hashing every vector of the model (no statistics needed)', async () => {
    // PGlite never runs ANALYZE; without statistics the planner hashed the model's vectors whole in
    // every batch read, which made a first start quadratic in the store (docs/benchmarks.md).
    const targets = await prepareEmbedding(t.db, set);
    await embedPending(t.db, targets);
    const explain: Queryable = { query: (sql, params) => t.db.query(`EXPLAIN ${sql}`, params), exec: (sql) => t.db.exec(sql) };
    const planOf = (rows: unknown[]) => (rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
    for (const plan of [
      planOf(await pendingPassages(explain, targets.passage.id, 8, 0)),
      planOf(await pendingPassages(explain, targets.passage.id, 8, 0, [1, 2])),
      planOf(await pendingDocuments(explain, targets.document.id, 8, 0)),
    ]) {
      expect(plan).toMatch(/SubPlan/);
      expect(plan).not.toMatch(/hashed SubPlan|Hash/);
    }
    // and what they read is right: nothing once all is embedded, a passage again once its vector goes
    expect(await pendingPassages(t.db, targets.passage.id, 8, 0)).toEqual([]);
    const [victim] = await t.db.query<{ id: number }>('SELECT passage_id AS id FROM passage_embeddings ORDER BY passage_id DESC LIMIT 1');
    await t.db.query('DELETE FROM passage_embeddings WHERE passage_id = $1', [victim.id]);
    expect(await pendingPassages(t.db, targets.passage.id, 8, 0)).toMatchObject([{ id: victim.id, hasVector: false, hasSentences: true }]);
  });

  it('refuses a model whose stored dimension or weights differ, changing nothing', async () => {
    await prepareEmbedding(t.db, set);
    const before = await t.db.query('SELECT * FROM embedding_models');
    await expect(registerModel(t.db, new RecordingEncoder(useLite, 'use-lite', useLite.checksum, 384))).rejects.toThrow(EmbeddingModelError);
    await expect(registerModel(t.db, new RecordingEncoder(useLite, 'use-lite', useLite.checksum, 384))).rejects.toThrow(
      /stored with dimension 512, but the configured encoder gives 384/,
    );
    await expect(registerModel(t.db, new RecordingEncoder(useLite, 'use-lite', '0'.repeat(64)))).rejects.toThrow(/the weights changed/);
    expect(await t.db.query('SELECT * FROM embedding_models')).toEqual(before);
  });

  it('refuses a question model whose space differs from its target model', () => {
    const small = new RecordingEncoder(useLite, 'small', 'a'.repeat(64), 256);
    expect(() => EncoderSet.of({ questionDocument: small, document: counting, questionPassage: counting, passage: counting })).toThrow(
      /serves questionDocument with dimension 256, but the document model "use-lite" has dimension 512/,
    );
  });

  it('encodes a question once per distinct question model', async () => {
    await set.encodeQuestion('What is the capital of Norway?');
    expect(counting.encoded).toEqual(['What is the capital of Norway?']);
    const second = new RecordingEncoder(useLite, 'use-lite-q', 'b'.repeat(64));
    const split = EncoderSet.of({ questionDocument: counting, document: counting, questionPassage: second, passage: counting });
    counting.encoded = [];
    const q = await split.encodeQuestion('Where is Oslo?');
    expect(counting.encoded).toEqual(['Where is Oslo?']);
    expect(second.encoded).toEqual(['Where is Oslo?']);
    expect(dot(q.document, q.passage)).toBeGreaterThan(0.99999);
  });
});

describe("passages split to the passage encoder's token budget (real USE-lite)", () => {
  const t = useTestDatabase({ each: true });
  let useLite: UseLiteEncoder;
  let set: EncoderSet;
  beforeAll(async () => {
    useLite = await UseLiteEncoder.load();
    set = EncoderSet.of({ questionDocument: useLite, document: useLite, questionPassage: useLite, passage: useLite });
  });
  afterAll(() => useLite.close());

  // Technical prose: long identifiers cost several SentencePiece tokens each, so 100 words run far
  // past USE-lite's 128 tokens.
  const technical = Array.from(
    { length: 40 },
    (_, i) => `Call urllib.parse.urlsplit_${i}(scheme_specific_part) before socket.getaddrinfo_${i}() resolves IPv6_addresses.`,
  ).join(' ');
  const doc = { key: 'net', title: 'Networking how-to', markdown: `# Networking how-to\n\n## Resolving names\n\n${technical}\n` };

  it('without a budget, passages are clipped when embedded; with it, none is, and every word is kept', async () => {
    const targets = await prepareEmbedding(t.db, set);
    const words = await ingest(t.db, [doc], { ...DEFAULT_INGEST_OPTIONS, embedWith: async () => targets });
    expect(words.embedded?.truncated).toBeGreaterThan(0);

    const split = await ingest(t.db, [doc], { ...DEFAULT_INGEST_OPTIONS, splitFor: async () => useLite, embedWith: async () => targets });
    // The budget is part of the content hash: the same input re-splits.
    expect(split.updated).toBe(1);
    expect(split.embedded?.truncated).toBe(0);
    const passages = await t.db.query<{ text: string; titlePath: string[] }>(
      `SELECT text, title_path AS "titlePath" FROM passages WHERE section_id IS NOT NULL ORDER BY ordinal`,
    );
    expect(passages.length).toBeGreaterThan(words.passages);
    for (const p of passages) expect(useLite.countTokens(passageEncodingText(p))).toBeLessThanOrEqual(useLite.maxTokens('passage'));
    expect(passages.map((p) => p.text).join(' ')).toBe(technical);

    const again = await ingest(t.db, [doc], { ...DEFAULT_INGEST_OPTIONS, splitFor: async () => useLite });
    expect(again.unchanged).toBe(1);
  });
});
