import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import { search } from '../src/retrieval/search';
import { BM25_INDEX_MARKER, hasBm25Index, refreshBm25Index } from '../src/store/bm25-index';
import type { Database } from '../src/store/db';
import { registerModel, vectorLiteral } from '../src/store/embeddings';
import { indexLexical } from '../src/store/lexical';
import { migrate } from '../src/store/migrate';
import { openMigratedDatabase } from '../src/store/open';
import { PgliteDatabase } from '../src/store/pglite';
import { pgMajorOf, UPGRADE_BACKUP, UPGRADE_BUILDING, UPGRADE_COMPLETE, UPGRADE_PHASE, upgradePg17Folder } from '../src/store/pglite-upgrade';
import { placeCorpus } from './helpers/place-corpus';
import { prng } from './helpers/prng';
import { storeSnapshot } from './helpers/store-snapshot';
import { syntheticModel } from './helpers/synthetic-model';
import { textSearch } from './helpers/text-search';

/**
 * A data folder an earlier release made (its PGlite was PostgreSQL 17), opened by this one
 * (PostgreSQL 18): copied at open, every row, vector and identity as it was, the old files kept
 * beside it, and a copy killed half way resumed. The old store is made with the old PGlite itself.
 */

const DIM = 8;
const QUESTIONS = ['Which river flows past the castle?', 'museum harbour festival', 'railway bridge over the island'];

/** Everything a retrieval reads, besides the snapshot: vectors, the per-model HNSW index, ids. */
async function extras(db: Database) {
  return {
    vectors: await db.query('SELECT model_id, passage_id, embedding::text AS v FROM passage_embeddings ORDER BY 1, 2'),
    documentVectors: await db.query('SELECT model_id, document_id, embedding::text AS v FROM document_embeddings ORDER BY 1, 2'),
    models: await db.query('SELECT id, name, dimension FROM embedding_models ORDER BY id'),
    hnsw: await db.query(`SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw_m%' ORDER BY 1`),
    ids: await db.query('SELECT (SELECT max(id) FROM documents) AS documents, (SELECT max(id) FROM passages) AS passages'),
  };
}

async function answers(db: Database) {
  const [model] = await db.query<{ id: number; dimension: number }>('SELECT id, dimension FROM embedding_models');
  const out: unknown[] = [];
  for (const q of QUESTIONS) {
    const lexical = await search(db, textSearch({ mode: 'LEXICAL', questionText: q, k2: 10 }));
    out.push(lexical.passages.map((p) => [p.passageId, p.score.toFixed(5)]));
  }
  const rand = prng(99);
  const question = Float32Array.from({ length: DIM }, () => rand() - 0.5);
  const flat = await search(db, {
    mode: 'FLAT',
    k1: 10,
    k2: 10,
    lambda: 1,
    questionForDocuments: question,
    questionForPassages: question,
    documentModel: model,
    passageModel: model,
    exact: true,
  });
  out.push(flat.passages.map((p) => [p.passageId, p.score.toFixed(5)]));
  return out;
}

async function makeOldStore(folder: string, bm25Index: boolean) {
  const old = await PgliteDatabase.openPostgres17(folder, { bm25Index });
  try {
    await migrate(old);
    await ingestDocuments(old, placeCorpus(3, 24), DEFAULT_INGEST_OPTIONS);
    await indexLexical(old);
    // As the earlier release's open did: a store with the index marks its folder.
    await refreshBm25Index(old);
    const model = await registerModel(old, syntheticModel('synthetic-upgrade', DIM));
    const rand = prng(7);
    const unit = () => {
      const v = Array.from({ length: DIM }, () => rand() - 0.5);
      const n = Math.hypot(...v);
      return v.map((x) => x / n);
    };
    const passages = await old.query<{ id: number; document_id: number }>('SELECT id, document_id FROM passages ORDER BY id');
    await old.query(
      `INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
       SELECT $1, u.id, u.doc, u.v::vector FROM unnest($2::int[], $3::int[], $4::text[]) AS u(id, doc, v)`,
      [model.id, passages.map((p) => p.id), passages.map((p) => p.document_id), passages.map(() => vectorLiteral(unit()))],
    );
    await old.query(
      `INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding)
       SELECT $1, d.id, d.content_hash, $2::vector FROM documents d`,
      [model.id, vectorLiteral(unit())],
    );
    return { snapshot: await storeSnapshot(old), extras: await extras(old), answers: await answers(old) };
  } finally {
    await old.close();
  }
}

describe('a PGlite store made by PostgreSQL 17 opens in PostgreSQL 18', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'dhr-upgrade-'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('copies every row, vector, index and identity; keeps the old files; answers as before; gets the BM25 index', async () => {
    if (process.env.DATABASE_URL) return; // PGlite only
    const folder = join(work, 'data');
    const before = await makeOldStore(folder, false);
    expect(pgMajorOf(folder)).toBe(17);

    const db = await openMigratedDatabase({ dataDir: folder });
    try {
      expect(pgMajorOf(folder)).toBe(18);
      expect(pgMajorOf(join(folder, UPGRADE_BACKUP))).toBe(17);
      expect(existsSync(join(folder, UPGRADE_BUILDING))).toBe(false);
      expect(existsSync(join(folder, UPGRADE_PHASE))).toBe(false);
      expect(await storeSnapshot(db)).toEqual(before.snapshot);
      expect(await extras(db)).toEqual(before.extras);
      expect(await answers(db)).toEqual(before.answers);
      // The default's BM25 index, which the old store lacked, built over every indexed passage.
      expect(await hasBm25Index(db)).toBe(true);
      expect(existsSync(join(folder, BM25_INDEX_MARKER))).toBe(true);
      // Identities go on past the old rows.
      await ingestDocuments(
        db,
        [{ key: 'after', title: 'After the upgrade', sections: [{ title: 'Castle', text: 'A castle by the river.' }] }],
        DEFAULT_INGEST_OPTIONS,
      );
      const [{ id }] = await db.query<{ id: number }>(`SELECT id FROM documents WHERE key = 'after'`);
      expect(id).toBeGreaterThan(Number((before.extras.ids[0] as { documents: number }).documents));
    } finally {
      await db.close();
    }
  });

  it('copies a table a range of blocks at a time: one block a step gives the same store', async () => {
    if (process.env.DATABASE_URL) return;
    const folder = join(work, 'data');
    const before = await makeOldStore(folder, true);
    const report = await upgradePg17Folder(folder, {
      openOld: (f) => PgliteDatabase.openPostgres17(f, { bm25Index: true }),
      openNew: (f) => PgliteDatabase.open({ dataDir: f }),
      blocksPerCopy: 1,
    });
    // More steps than tables: some table took several.
    expect(report!.steps).toBeGreaterThan(report!.tables);
    const db = await openMigratedDatabase({ dataDir: folder });
    try {
      expect(await storeSnapshot(db)).toEqual(before.snapshot);
      expect(await extras(db)).toEqual(before.extras);
      expect(await answers(db)).toEqual(before.answers);
    } finally {
      await db.close();
    }
  });

  it('resumes a copy killed half way: a new store without its completion mark is made again, files half moved are moved on', async () => {
    if (process.env.DATABASE_URL) return;
    const folder = join(work, 'data');
    const before = await makeOldStore(folder, true);
    expect(existsSync(join(folder, BM25_INDEX_MARKER))).toBe(true);
    // A copy that died before it was complete.
    mkdirSync(join(folder, UPGRADE_BUILDING));
    writeFileSync(join(join(folder, UPGRADE_BUILDING), 'PG_VERSION'), '18\n');
    let db = await openMigratedDatabase({ dataDir: folder });
    expect(await storeSnapshot(db)).toEqual(before.snapshot);
    await db.close();

    // Killed while the new files moved in: some are in the folder, the rest still beside it.
    const building = join(folder, UPGRADE_BUILDING);
    mkdirSync(building);
    const names = readdirSync(folder).filter((n) => n === 'PG_VERSION' || n === 'base' || n === 'global');
    for (const name of names) renameSync(join(folder, name), join(building, name));
    writeFileSync(join(building, UPGRADE_COMPLETE), '{}\n');
    writeFileSync(join(folder, UPGRADE_PHASE), 'in\n');
    db = await openMigratedDatabase({ dataDir: folder });
    try {
      expect(readFileSync(join(folder, 'PG_VERSION'), 'utf8').trim()).toBe('18');
      expect(existsSync(building)).toBe(false);
      expect(await storeSnapshot(db)).toEqual(before.snapshot);
      expect(await answers(db)).toEqual(before.answers);
    } finally {
      await db.close();
    }
  });
});
