/**
 * What a search statement sends: one parameter per distinct question vector, in the form each
 * database reads best (binary for PostgreSQL, a text literal for PGlite), and ef_search from
 * the factor × the rows a stage returns.
 */
import { loadConfig, ConfigError } from '../src/config';
import { searchStatement } from '../src/retrieval/sql';
import type { VectorSearch } from '../src/retrieval/sql';
import { DEFAULT_EF_FACTOR } from '../src/retrieval/types';
import { vectorLiteral } from '../src/store/embeddings';
import { createTestDatabase, type TestDatabase } from './helpers/database';

const model = { id: 7, dimension: 3 };
const request = (over: Partial<VectorSearch>): VectorSearch => ({
  mode: 'HIERARCHICAL',
  documentModel: model,
  passageModel: model,
  questionForDocuments: Float32Array.of(1, 0, 0),
  questionForPassages: Float32Array.of(0, 1, 0),
  k1: 100,
  k2: 20,
  lambda: 1,
  ...over,
});
const vectorParams = (params: unknown[]) => params.filter((p) => typeof p === 'string' && p.startsWith('['));

describe('searchStatement', () => {
  it('sends one vector parameter when one question vector serves both stages', () => {
    const q = Float32Array.of(0.6, 0.8, 0);
    for (const mode of ['HIERARCHICAL', 'PARALLEL', 'HYBRID_HIERARCHICAL'] as const) {
      // (meanPassages 1: stage 2 scores every passage; by candidates it also sends the negated vector, below)
      expect(vectorParams(searchStatement(request({ mode, questionForDocuments: q, questionForPassages: q, meanPassages: 1 })).params)).toEqual([
        vectorLiteral(q),
      ]);
      // Two question models (E_Q^φ ≠ E_Q^ψ): two vectors.
      expect(vectorParams(searchStatement(request({ mode, meanPassages: 1 })).params)).toHaveLength(2);
    }
    // Stage 2 by candidates: the question and its negation (the farthest passage bounds the normalization).
    expect(vectorParams(searchStatement(request({ mode: 'HYBRID_HIERARCHICAL', questionForDocuments: q, questionForPassages: q })).params)).toEqual([
      vectorLiteral(q),
      vectorLiteral(q.map((x) => -x)),
    ]);
  });

  it('encodes vectors with the function it is given', () => {
    const seen: Float32Array[] = [];
    const statement = searchStatement(request({}), (v) => {
      seen.push(v);
      return { vector: v };
    });
    expect(seen).toHaveLength(2);
    expect(statement.params.filter((p) => typeof p === 'object' && p !== null && 'vector' in p)).toHaveLength(2);
  });

  it('sets ef_search to the factor × the rows a stage returns, floored by efSearch and capped at 1000', () => {
    const ef = (over: Partial<VectorSearch>) => searchStatement(request(over)).settings['hnsw.ef_search'];
    expect(ef({})).toBe(String(DEFAULT_EF_FACTOR * 100));
    expect(ef({ efFactor: 1.5 })).toBe('150');
    expect(ef({ efFactor: 1, k1: 30 })).toBe('100'); // the default floor of 100
    expect(ef({ efFactor: 1, k1: 30, efSearch: 10 })).toBe('30');
    expect(ef({ efFactor: 3, k1: 500 })).toBe('1000');
    expect(ef({ mode: 'FLAT', efFactor: 2, k2: 300 })).toBe('600');
  });
});

describe('iterative scans', () => {
  it('every search sets both iterative-scan settings, defaults or the given ones', () => {
    for (const mode of ['HIERARCHICAL', 'PARALLEL', 'FLAT', 'DOCUMENTS', 'LEXICAL', 'HYBRID'] as const) {
      expect(searchStatement(request({ mode })).settings).toMatchObject({ 'hnsw.iterative_scan': 'strict_order', 'hnsw.max_scan_tuples': '20000' });
      expect(searchStatement(request({ mode, iterativeScan: 'relaxed_order', maxScanTuples: 777 })).settings).toMatchObject({
        'hnsw.iterative_scan': 'relaxed_order',
        'hnsw.max_scan_tuples': '777',
      });
    }
  });

  it('HNSW_ITERATIVE_SCAN and HNSW_MAX_SCAN_TUPLES are read and validated', () => {
    expect(loadConfig({})).toMatchObject({ iterativeScan: 'strict_order', maxScanTuples: 20000 });
    expect(loadConfig({ HNSW_ITERATIVE_SCAN: 'relaxed_order', HNSW_MAX_SCAN_TUPLES: '50000' })).toMatchObject({
      iterativeScan: 'relaxed_order',
      maxScanTuples: 50000,
    });
    // off would let a filtered search return fewer than k results: not offered.
    expect(() => loadConfig({ HNSW_ITERATIVE_SCAN: 'off' })).toThrow(/HNSW_ITERATIVE_SCAN must be one of strict_order, relaxed_order/);
    expect(() => loadConfig({ HNSW_MAX_SCAN_TUPLES: '0' })).toThrow(/HNSW_MAX_SCAN_TUPLES/);
  });
});

describe('HNSW_EF_FACTOR', () => {
  it('is read from the environment and validated', () => {
    expect(loadConfig({}).efFactor).toBe(DEFAULT_EF_FACTOR);
    expect(loadConfig({ HNSW_EF_FACTOR: '2.5' }).efFactor).toBe(2.5);
    for (const bad of ['0.5', 'many', '101']) {
      expect(() => loadConfig({ HNSW_EF_FACTOR: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ HNSW_EF_FACTOR: bad })).toThrow(/HNSW_EF_FACTOR/);
    }
  });
});

describe('vector parameters on the database', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.drop());

  it('arrive as the same vector in binary on both databases (PGlite too: no text for it to parse)', async () => {
    const v = Float32Array.of(0.25, -1.5, 3e-7, 1234.5);
    const param = t.db.vectorParam ? t.db.vectorParam(v) : vectorLiteral(v);
    expect(Buffer.isBuffer(param)).toBe(true);
    // first inside a transaction (PGlite finds pgvector's type on it), beside a text-form vector
    const [inTx] = await t.db.transaction((tx) => tx.query<{ same: boolean }>(`SELECT $1::vector(4) = $2::vector(4) AS same`, [param, vectorLiteral(v)]));
    expect(inTx.same).toBe(true);
    const [row] = await t.db.query<{ text: string; ip: number }>(`SELECT ($1::vector(4))::text AS text, -($1::vector(4) <#> '[1,1,1,1]'::vector(4)) AS ip`, [
      param,
    ]);
    // Bit for bit: float4 in, float4 out.
    expect(Float32Array.from(JSON.parse(row.text) as number[])).toEqual(v);
    expect(row.ip).toBeCloseTo(0.25 - 1.5 + 3e-7 + 1234.5, 3);
  });
});
