import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyMap, identityMap, type LinearMap } from '../src/adapters/linear';
import { PairsFileError, type TrainingPair } from '../src/adapters/pairs-file';
import { EncoderSet } from '../src/encoders/set';
import { DomainError, ErrorCode } from '../src/errors';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { adapt } from '../src/pipeline/adapt';
import { ingest } from '../src/pipeline/ingest';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import type { RetrievalMode } from '../src/retrieval/modes';
import { retrieve, type Retrieval } from '../src/retrieval/retrieve';
import { activeAssignment } from '../src/store/active';
import { activateAdapter, listAdapters, registerAdapter, type AdapterBase } from '../src/store/adapters';
import { registerModel, vectorLiteral, type EmbeddingModelRow, type EmbeddingTargets } from '../src/store/embeddings';
import { useTestDatabase } from './helpers/database';
import { prng } from './helpers/prng';
import { syntheticModel } from './helpers/synthetic-model';
import { tableModel } from './helpers/table-model';

/**
 * Query-side adapters against a real store (PGlite, or PostgreSQL with DATABASE_URL): register,
 * activate, retrieval applies them to the question vectors only (checked against brute force
 * here), roll back; refusals leave nothing behind; `adapt` end to end over a pairs file.
 */

const DIM = 16;
const MODEL = 'synthetic-adapter-16';
const DENSE_AND_HYBRID: RetrievalMode[] = ['HIERARCHICAL', 'PARALLEL', 'FLAT', 'DOCUMENTS', 'HYBRID', 'HYBRID_HIERARCHICAL'];

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

function unit(v: ArrayLike<number>): Float32Array {
  const n = Math.hypot(...Array.from(v));
  return Float32Array.from(v, (x) => x / n);
}

function randomMap(d: number, rand: () => number, size = 0.4): LinearMap {
  return { dim: d, w: Float32Array.from({ length: d * d }, () => (rand() - 0.5) * size), b: Float32Array.from({ length: d }, () => (rand() - 0.5) * 0.1) };
}

const WORDS = ['river', 'mountain', 'desert', 'forest', 'ocean', 'valley', 'island', 'glacier'];

describe('query-side adapters in the store and retrieval', () => {
  const t = useTestDatabase();
  let dir: string;
  let encoder: ReturnType<typeof tableModel>;
  let registry: ModelRegistry;
  let model: EmbeddingModelRow;
  const docs = new Map<number, Float32Array>();
  const passages = new Map<number, { documentId: number; vector: Float32Array }>();

  const base = (): { document: AdapterBase; passage: AdapterBase } => ({
    document: { question: model, target: model },
    passage: { question: model, target: model },
  });
  const current = async (): Promise<EmbeddingTargets> => (await registry.current())!;
  const ask = async (question: string, mode: RetrievalMode, k = 1000): Promise<Retrieval> =>
    retrieve(t.db, await current(), { question, mode, k1: k, k2: k }, { exact: true });
  const adapterCount = async () => Number((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM query_adapters'))[0].n);
  const activeName = async () => (await listAdapters(t.db)).find((a) => a.active)?.name ?? null;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dhr-adapter-'));
    const rand = prng(21);
    const inputs = Array.from({ length: 24 }, (_, i) => ({
      key: `d${i}`,
      title: `Doc ${i} ${WORDS[i % WORDS.length]}`,
      sections: Array.from({ length: 6 }, (_, s) => ({
        title: `S${s}`,
        text: `The ${WORDS[(i + s) % WORDS.length]} near ${WORDS[(i * s) % WORDS.length]} number ${s}.`,
      })),
    }));
    await ingest(t.db, inputs, DEFAULT_INGEST_OPTIONS);
    model = await registerModel(t.db, syntheticModel(MODEL, DIM));
    const drows = await t.db.query<{ id: number }>('SELECT id FROM documents ORDER BY id');
    for (const d of drows) docs.set(Number(d.id), unit(Array.from({ length: DIM }, () => rand() - 0.5)));
    const prows = await t.db.query<{ id: number; documentId: number }>('SELECT id, document_id AS "documentId" FROM passages ORDER BY id');
    for (const p of prows) {
      const d = docs.get(Number(p.documentId))!;
      passages.set(Number(p.id), { documentId: Number(p.documentId), vector: unit(Array.from(d, (x) => x + 0.5 * (rand() - 0.5))) });
    }
    await t.db.query(
      `INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding)
       SELECT $1, u.id, d.content_hash, u.v::vector FROM unnest($2::int[], $3::text[]) AS u(id, v) JOIN documents d ON d.id = u.id`,
      [model.id, [...docs.keys()], [...docs.values()].map(vectorLiteral)],
    );
    await t.db.query(
      `INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
       SELECT $1, u.id, u.doc, u.v::vector FROM unnest($2::int[], $3::int[], $4::text[]) AS u(id, doc, v)`,
      [model.id, [...passages.keys()], [...passages.values()].map((p) => p.documentId), [...passages.values()].map((p) => vectorLiteral(p.vector))],
    );
    await t.db.exec('ANALYZE');
    encoder = tableModel(MODEL, DIM);
    registry = await ModelRegistry.of(t.db, EncoderSet.of({ questionDocument: encoder, document: encoder, questionPassage: encoder, passage: encoder }), {
      ttlMs: 0,
    });
  });

  afterAll(async () => {
    await registry.close();
    await rm(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await activateAdapter(t.db, null);
  });

  const strip = (r: Retrieval) => ({ passages: r.passages, documents: r.documents, warnings: r.warnings });

  it('an identity adapter reproduces today’s scores exactly, in every dense and hybrid mode', async () => {
    const questions = ['river mountain', 'the ocean near the valley', 'glacier number 3'];
    const before = new Map<string, Retrieval>();
    for (const q of questions) for (const mode of DENSE_AND_HYBRID) before.set(`${q}|${mode}`, await ask(q, mode));
    await registerAdapter(t.db, {
      name: 'identity',
      dimension: DIM,
      maps: { document: identityMap(DIM), passage: identityMap(DIM) },
      models: base(),
      training: {},
    });
    await activateAdapter(t.db, 'identity');
    for (const q of questions) {
      for (const mode of DENSE_AND_HYBRID) {
        const after = await ask(q, mode);
        expect(after.adapter).toBe('identity');
        expect(strip(after)).toEqual(strip(before.get(`${q}|${mode}`)!));
        expect(after.passages.length + after.documents.length).toBeGreaterThan(0);
      }
    }
  });

  it('applies the active adapter to the question vectors only (scores = brute force with q′), and rolls back to today’s scores', async () => {
    const rand = prng(5);
    const maps = { document: randomMap(DIM, rand), passage: randomMap(DIM, rand) };
    await registerAdapter(t.db, { name: 'random', dimension: DIM, maps, models: base(), training: { pairs: 0 } });
    const question = 'forest island';
    const q = (await encoder.encode([question], 'questionPassage')).vectors[0];
    const baseline = { flat: await ask(question, 'FLAT'), documents: await ask(question, 'DOCUMENTS') };

    await activateAdapter(t.db, 'random');
    const flat = await ask(question, 'FLAT');
    const documents = await ask(question, 'DOCUMENTS');
    expect(flat.adapter).toBe('random');
    const qp = applyMap(maps.passage, q);
    const qd = applyMap(maps.document, q);
    expect(flat.passages).toHaveLength(passages.size);
    for (const p of flat.passages) expect(p.passageScore!).toBeCloseTo(dot(qp, passages.get(Number(p.passageId))!.vector), 5);
    const expectedOrder = [...passages].map(([id, p]) => ({ id, s: dot(qp, p.vector) })).sort((a, b) => b.s - a.s);
    expect(Number(flat.passages[0].passageId)).toBe(expectedOrder[0].id);
    for (const d of documents.documents) expect(d.score).toBeCloseTo(dot(qd, docs.get(Number(d.documentId))!), 5);
    // It changed something: the adapted ranking is not today's.
    expect(flat.passages.map((p) => p.passageId)).not.toEqual(baseline.flat.passages.map((p) => p.passageId));

    await activateAdapter(t.db, null);
    const back = { flat: await ask(question, 'FLAT'), documents: await ask(question, 'DOCUMENTS') };
    expect(back.flat.adapter).toBeNull();
    expect(strip(back.flat)).toEqual(strip(baseline.flat));
    expect(strip(back.documents)).toEqual(strip(baseline.documents));
  });

  it('refuses an adapter of another dimension or other models at activation, and changes nothing', async () => {
    const rand = prng(6);
    const eight = await registerModel(t.db, syntheticModel('synthetic-adapter-8', 8));
    const other = await registerModel(t.db, syntheticModel('synthetic-adapter-16b', DIM));
    await registerAdapter(t.db, {
      name: 'eight',
      dimension: 8,
      maps: { passage: randomMap(8, rand) },
      models: { passage: { question: eight, target: eight } },
      training: {},
    });
    await registerAdapter(t.db, {
      name: 'other',
      dimension: DIM,
      maps: { passage: randomMap(DIM, rand) },
      models: { passage: { question: other, target: other } },
      training: {},
    });
    await registerAdapter(t.db, { name: 'fits', dimension: DIM, maps: { passage: randomMap(DIM, rand) }, models: { passage: base().passage }, training: {} });
    await activateAdapter(t.db, 'fits');

    const refused = async (name: string) => (await activateAdapter(t.db, name).catch((e: unknown) => e)) as DomainError;
    const dims = await refused('eight');
    expect(dims).toBeInstanceOf(DomainError);
    expect(dims.code).toBe(ErrorCode.DIMENSION_MISMATCH);
    expect(dims.message).toMatch(/adapter "eight" maps 8-d vectors, but the active questionPassage model "synthetic-adapter-16" is 16-d/);
    const models = await refused('other');
    expect(models.code).toBe(ErrorCode.CONFLICT);
    expect(models.message).toMatch(/trained for questionPassage model "synthetic-adapter-16b"/);
    expect((await refused('nope')).code).toBe(ErrorCode.NOT_FOUND);
    // The adapter that was active still is, and retrieval still applies it.
    expect(await activeName()).toBe('fits');
    expect((await ask('river', 'FLAT')).adapter).toBe('fits');
    // A passage-only adapter is not reported for a mode that reads no passage vector.
    expect((await ask('river', 'DOCUMENTS')).adapter).toBeNull();
  });

  it('refuses to store a name twice or a map of the wrong dimension, storing nothing', async () => {
    const rand = prng(7);
    await registerAdapter(t.db, { name: 'once', dimension: DIM, maps: { passage: randomMap(DIM, rand) }, models: { passage: base().passage }, training: {} });
    const before = await adapterCount();
    const again = await registerAdapter(t.db, {
      name: 'once',
      dimension: DIM,
      maps: { passage: randomMap(DIM, rand) },
      models: { passage: base().passage },
      training: {},
    }).catch((e: DomainError) => e);
    expect((again as DomainError).code).toBe(ErrorCode.CONFLICT);
    const wrong = await registerAdapter(t.db, {
      name: 'wrong',
      dimension: DIM,
      maps: { passage: randomMap(8, rand) },
      models: { passage: base().passage },
      training: {},
    }).catch((e: DomainError) => e);
    expect((wrong as DomainError).code).toBe(ErrorCode.DIMENSION_MISMATCH);
    expect(await adapterCount()).toBe(before);
  });

  it('ignores, with a warning, an active adapter whose models were switched away', async () => {
    const rand = prng(8);
    await registerAdapter(t.db, {
      name: 'stranded',
      dimension: DIM,
      maps: { passage: randomMap(DIM, rand) },
      models: { passage: base().passage },
      training: {},
    });
    await activateAdapter(t.db, 'stranded');
    const other = tableModel('synthetic-adapter-16c', DIM);
    const switched = await ModelRegistry.of(t.db, EncoderSet.of({ questionDocument: encoder, document: encoder, questionPassage: other, passage: other }), {
      ttlMs: 0,
    });
    try {
      const result = await retrieve(t.db, await switched.current(), { question: 'river', mode: 'FLAT', k1: 10, k2: 10 }, { exact: true });
      expect(result.adapter).toBeNull();
      expect(result.warnings).toEqual([
        expect.stringMatching(/the active adapter is not applied: adapter "stranded" was trained for questionPassage model "synthetic-adapter-16"/),
      ]);
      // Activating it under these models is refused.
      expect(((await activateAdapter(t.db, 'stranded').catch((e: unknown) => e)) as DomainError).code).toBe(ErrorCode.CONFLICT);
    } finally {
      await switched.close();
      // Back to the test's model for every role.
      await ModelRegistry.of(t.db, EncoderSet.of({ questionDocument: encoder, document: encoder, questionPassage: encoder, passage: encoder })).then((r) =>
        r.close(),
      );
    }
    expect((await activeAssignment(t.db)).passage?.name).toBe(MODEL);
  });

  describe('adapt (train over a pairs file, register, activate)', () => {
    const pairFor = (question: string, passageId: number, negatives: number[]): TrainingPair => {
      const p = passages.get(passageId)!;
      const passage = (id: number) => ({ passageId: id, documentId: passages.get(id)!.documentId, sectionId: null, titlePath: ['T'], text: `p${id}` });
      const otherDoc = [...docs.keys()].find((d) => d !== p.documentId)!;
      return {
        kind: 'section-path',
        question,
        questionPassageId: null,
        positive: passage(passageId),
        positiveDocument: { documentId: p.documentId, title: 'T' },
        negatives: { bm25: [], inDoc: negatives.map(passage), inSec: [], documents: [{ documentId: otherDoc, title: 'U' }] },
      };
    };

    async function writePairs(name: string, pairs: (TrainingPair | string)[]): Promise<string> {
      const file = join(dir, name);
      await writeFile(file, pairs.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('\n'));
      return file;
    }

    /** Questions distorted by a known map: the adapter that undoes it puts each positive first. */
    function distortedPairs(count: number, seed: number): TrainingPair[] {
      const rand = prng(seed);
      const distortion = randomMap(DIM, rand, 0.6);
      const ids = [...passages.keys()];
      return Array.from({ length: count }, (_, i) => {
        const id = ids[Math.floor(rand() * ids.length)];
        const question = `pair ${seed} ${i}`;
        encoder.table.set(question, applyMap(distortion, passages.get(id)!.vector));
        const siblings = ids.filter((other) => other !== id && passages.get(other)!.documentId === passages.get(id)!.documentId);
        return pairFor(question, id, siblings.slice(0, 3));
      });
    }

    it('trains on the pairs, registers with its training record and activates in one step; retrieval then ranks positives higher', async () => {
      const pairs = distortedPairs(600, 31);
      const file = await writePairs('train.jsonl', pairs);
      const targets = await current();
      const top1 = async () => {
        let hits = 0;
        for (const p of pairs.slice(0, 100)) if (Number((await ask(p.question, 'FLAT', 1)).passages[0].passageId) === p.positive.passageId) hits++;
        return hits;
      };
      const before = await top1();
      const result = await adapt(t.db, targets, [file], {
        name: 'learned',
        levels: ['passage'],
        epochs: 15,
        lr: 0.01,
        temperature: 0.05,
        l2: 0,
        seed: 3,
        activate: true,
      });
      const report = result.levels.passage!;
      expect(result.activated).toBe(true);
      expect(report.pairs).toEqual({ train: 540, heldOut: 60 });
      expect(report.skipped).toBe(0);
      expect(report.curve.length).toBeGreaterThan(0);
      const kept = report.curve[report.bestEpoch - 1].heldOut;
      expect(kept.accuracy).toBeGreaterThan(report.baseline.accuracy);
      expect(kept.loss).toBeLessThan(report.baseline.loss);

      const [stored] = (await listAdapters(t.db)).filter((a) => a.name === 'learned');
      expect(stored).toMatchObject({ active: true, dimension: DIM, levels: ['passage'], models: { passage: { question: MODEL, target: MODEL } } });
      expect(stored.training).toMatchObject({ files: ['train.jsonl'], pairs: 600, kinds: { 'section-path': 600 } });
      expect((stored.training.levels as Record<string, unknown>).passage).toMatchObject({ bestEpoch: report.bestEpoch, pairs: report.pairs });

      expect((await ask(pairs[0].question, 'FLAT', 1)).adapter).toBe('learned');
      const after = await top1();
      expect(after).toBeGreaterThan(before);
    });

    it.each([
      // The last column: the line a PairsFileError names (none for a problem of the whole set).
      ['too few pairs', () => distortedPairs(5, 41), ErrorCode.BAD_USER_INPUT, /5 training pairs are too few/, undefined],
      [
        'a bad line',
        () => [...distortedPairs(30, 42).slice(0, 2), '{"kind": "dual-link"}', ...distortedPairs(30, 43)],
        ErrorCode.BAD_USER_INPUT,
        /bad\.jsonl:3: question must be/,
        3,
      ],
    ])('refuses %s with a typed error, storing and activating nothing', async (_, make, code, message, line) => {
      const file = await writePairs('bad.jsonl', make());
      const before = await adapterCount();
      const error = (await adapt(t.db, await current(), [file], { name: 'refused', activate: true }).catch((e: unknown) => e)) as DomainError;
      expect(error).toBeInstanceOf(DomainError);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(error instanceof PairsFileError).toBe(line !== undefined);
      expect((error as Partial<PairsFileError>).line).toBe(line);
      expect(await adapterCount()).toBe(before);
      expect(await activeName()).toBeNull();
    });

    it('refuses a name already taken before reading anything', async () => {
      await registerAdapter(t.db, { name: 'taken', dimension: DIM, maps: { passage: identityMap(DIM) }, models: { passage: base().passage }, training: {} });
      const error = (await adapt(t.db, await current(), [join(dir, 'absent.jsonl')], { name: 'taken' }).catch((e: unknown) => e)) as DomainError;
      expect(error.code).toBe(ErrorCode.CONFLICT);
    });
  });
});
