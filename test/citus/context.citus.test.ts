import { DEFAULT_INGEST_OPTIONS } from '../../src/ingest/types';
import { APPROXIMATE_TOKENIZER, assembleContext, CONTEXT_EXPANSIONS, type ContextHit } from '../../src/pipeline/context';
import { ingest } from '../../src/pipeline/ingest';
import type { Database } from '../../src/store/db';
import { createCitusDatabase, createSingleDatabase, type CitusTestDatabase } from '../helpers/citus';
import { prng } from '../helpers/prng';

/**
 * Context assembly on Citus (coordinator + workers) against the same corpus on one PostgreSQL
 * server (which test/context.test.ts checks against brute force): the same blocks for the same
 * ranks and budgets, and every block within one shard, since a block is one section's passages
 * and the title tree is distributed by document.
 */

const WORDS = ['river', 'mountain', 'engine', 'protein', 'violin', 'harbor', 'glacier', 'senate', 'orbit', 'copper', 'canal', 'comet'];

function corpus(seed: number) {
  const rand = prng(seed);
  const text = () => Array.from({ length: 4 + Math.floor(rand() * 20) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
  const passages = () => Array.from({ length: Math.floor(rand() * 5) }, () => ({ text: text() }));
  return Array.from({ length: 40 }, (_, i) => ({
    key: `doc-${i}`,
    title: `document ${i}`,
    passages: passages(),
    sections: Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, s) => ({
      title: `part ${s}`,
      passages: passages(),
      sections: [{ title: 'sub', passages: passages() }],
    })),
  }));
}

describe('Citus: context blocks as on one server, each within one shard', () => {
  let citus: CitusTestDatabase;
  let single: { db: Database; drop(): Promise<void> };

  beforeAll(async () => {
    [citus, single] = await Promise.all([createCitusDatabase(), createSingleDatabase()]);
    // One document at a time, so both stores draw the same ids in the same order.
    for (const db of [citus.db, single.db]) for (const d of corpus(11)) await ingest(db, [d], { ...DEFAULT_INGEST_OPTIONS, concurrency: 1 });
  }, 300_000);

  afterAll(async () => {
    await citus?.drop();
    await single?.drop();
  });

  it('gives the same blocks for random ranks, budgets and expand forms, none spanning shards', async () => {
    const all = await single.db.query<{ id: number; documentId: number }>('SELECT id, document_id AS "documentId" FROM passages ORDER BY id');
    const rand = prng(5);
    let blocks = 0;
    for (let t = 0; t < 30; t++) {
      const hits: ContextHit[] = all
        .filter(() => rand() < 0.15)
        .sort(() => rand() - 0.5)
        .map((p, i) => ({ ...p, passageId: p.id, score: 5 - i / 100 }));
      const expand = CONTEXT_EXPANSIONS[t % CONTEXT_EXPANSIONS.length];
      const options = { tokens: 200 + Math.floor(rand() * 800), expand, mergeRatio: 0.5 };
      const [onCitus, onOne] = await Promise.all([
        assembleContext(citus.db, hits, options, APPROXIMATE_TOKENIZER),
        assembleContext(single.db, hits, options, APPROXIMATE_TOKENIZER),
      ]);
      expect(onCitus).toEqual(onOne);
      for (const b of onCitus.blocks) {
        const [held] = await citus.db.query<{ shards: number; passages: number }>(
          `SELECT count(DISTINCT get_shard_id_for_distribution_column('passages', document_id))::int AS shards, count(*)::int AS passages
           FROM passages WHERE id = ANY($1::int[])`,
          [b.passageIds],
        );
        expect(held).toEqual({ shards: 1, passages: b.passageIds.length });
        blocks++;
      }
    }
    expect(blocks).toBeGreaterThan(30);
  });
});
