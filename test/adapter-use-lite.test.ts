import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { identityMap } from '../src/adapters/linear';
import type { TrainingPair } from '../src/adapters/pairs-file';
import { EncoderSet } from '../src/encoders/set';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { adapt } from '../src/pipeline/adapt';
import { ingest } from '../src/pipeline/ingest';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { retrieve } from '../src/retrieval/retrieve';
import { activateAdapter, listAdapters, registerAdapter } from '../src/store/adapters';
import { useTestDatabase } from './helpers/database';

/**
 * End to end with the real default model (USE-lite, 512-d): ingest and embed a small corpus, train
 * an adapter at the default settings (rank 32) on pairs over it, register and activate; retrieval
 * applies it; an identity adapter on the same model leaves the default mode's scores exactly as
 * they were.
 */

const CITIES = ['Oslo', 'Lima', 'Cairo', 'Hanoi', 'Quito', 'Dakar', 'Riga', 'Doha'];
const TOPICS = ['climate', 'economy', 'transport', 'history', 'cuisine'];

describe('query-side adapter with USE-lite', () => {
  const t = useTestDatabase();
  let encoders: EncoderSet;
  let registry: ModelRegistry;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dhr-adapter-use-'));
    encoders = await EncoderSet.load();
    registry = await ModelRegistry.of(t.db, encoders, { ttlMs: 0 });
    const docs = CITIES.map((city) => ({
      title: city,
      sections: TOPICS.map((topic) => ({ title: topic, text: `The ${topic} of ${city} is described here, with facts about ${city} and its ${topic}.` })),
    }));
    const result = await ingest(t.db, docs, { ...DEFAULT_INGEST_OPTIONS, embedWith: () => registry.current({ fresh: true }) });
    expect(result.embedded?.passages).toBeGreaterThanOrEqual(CITIES.length * TOPICS.length);
  }, 120_000);
  afterAll(async () => {
    await registry?.close();
    await encoders?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('trains at the default settings, activates, and retrieval applies it; an identity adapter changes no score', async () => {
    const rows = await t.db.query<{ id: number; documentId: number; title: string; section: string; text: string }>(
      `SELECT p.id, p.document_id AS "documentId", d.title, p.title_path[array_length(p.title_path, 1)] AS section, p.text
       FROM passages p JOIN documents d ON d.id = p.document_id ORDER BY p.id`,
    );
    const passage = (r: (typeof rows)[number]) => ({
      passageId: r.id,
      documentId: r.documentId,
      sectionId: null,
      titlePath: [r.title, r.section],
      text: r.text,
    });
    const pairs: TrainingPair[] = rows.flatMap((r) =>
      ['What about the %s of %c?', 'Tell me the %s in %c', '%c %s'].map((form) => ({
        kind: 'section-path' as const,
        question: form.replace('%s', r.section).replace('%c', r.title),
        questionPassageId: null,
        positive: passage(r),
        positiveDocument: { documentId: r.documentId, title: r.title },
        negatives: {
          bm25: [],
          inDoc: rows.filter((o) => o.documentId === r.documentId && o.id !== r.id).map(passage),
          inSec: [],
          documents: rows.filter((o) => o.documentId !== r.documentId && o.section === r.section).map((o) => ({ documentId: o.documentId, title: o.title })),
        },
      })),
    );
    const file = join(dir, 'pairs.jsonl');
    await writeFile(file, pairs.map((p) => JSON.stringify(p)).join('\n'));
    const targets = (await registry.current())!;
    const baseline = await retrieve(t.db, targets, { question: 'transport in Riga', k1: 10, k2: 10 }, { exact: true });

    const result = await adapt(t.db, targets, [file], { name: 'use-lite-adapter', epochs: 3, activate: true });
    expect(result.adapter).toMatchObject({ name: 'use-lite-adapter', dimension: 512, levels: ['document', 'passage'], active: true });
    for (const level of ['document', 'passage'] as const) {
      const report = result.levels[level]!;
      expect(report.settings).toMatchObject({ rank: 32 });
      expect(report.pairs.train + report.pairs.heldOut).toBe(pairs.length);
      expect(report.curve.length).toBeGreaterThan(0);
    }
    const adapted = await retrieve(t.db, await registry.current(), { question: 'transport in Riga', k1: 10, k2: 10 }, { exact: true });
    expect(adapted.adapter).toBe('use-lite-adapter');
    // Pairs that name each passage's section and city are learnable: training must lower the held-out
    // loss below the identity's, so a map is kept and retrieval's scores change.
    const passageLevel = result.levels.passage!;
    expect(passageLevel.bestEpoch).toBeGreaterThan(0);
    expect(passageLevel.curve[passageLevel.bestEpoch - 1].heldOut.loss).toBeLessThan(passageLevel.baseline.loss);
    expect(adapted.passages.map((p) => p.score)).not.toEqual(baseline.passages.map((p) => p.score));

    const row = (await registry.current())!.passage;
    const base = { question: row, target: row };
    await registerAdapter(t.db, {
      name: 'use-lite-identity',
      dimension: 512,
      maps: { document: identityMap(512), passage: identityMap(512) },
      models: { document: base, passage: base },
      training: {},
    });
    await activateAdapter(t.db, 'use-lite-identity');
    const same = await retrieve(t.db, await registry.current(), { question: 'transport in Riga', k1: 10, k2: 10 }, { exact: true });
    expect(same.adapter).toBe('use-lite-identity');
    expect(same.passages).toEqual(baseline.passages);
    expect(same.documents).toEqual(baseline.documents);
    expect((await listAdapters(t.db)).map((a) => [a.name, a.active])).toEqual([
      ['use-lite-adapter', false],
      ['use-lite-identity', true],
    ]);
  }, 120_000);
});
