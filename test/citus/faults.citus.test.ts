import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { DomainError, ErrorCode } from '../../src/errors';
import { DEFAULT_INGEST_OPTIONS } from '../../src/ingest/types';
import { ingest } from '../../src/pipeline/ingest';
import { search } from '../../src/retrieval/search';
import { assertDistribution } from '../../src/store/citus';
import type { Database } from '../../src/store/db';
import { migrate } from '../../src/store/migrate';
import { deleteDocument } from '../../src/store/write';
import { createCitusDatabase, createSingleDatabase } from '../helpers/citus';

/** Faults and misconfiguration on a real Citus cluster (scripts/citus-cluster.sh). */

const cluster = (...args: string[]) => execFileSync('bash', [join(__dirname, '../../scripts/citus-cluster.sh'), ...args], { stdio: 'pipe', env: process.env });

const doc = (i: number, extra = '') => ({
  key: `k${i}`,
  title: `Title ${i} harbor`,
  sections: [
    { title: 'One', text: `river engine ${i} ${extra} [see](k${(i + 1) % 12}).` },
    { title: 'Two', text: `glacier opera protein ${i % 3 === 0 ? 'comet' : 'orbit'}.` },
  ],
});

/** BM25 statistics summed per level, and the links that resolved: what writes must keep equal. */
const state = async (db: Database) => ({
  stats: await db.query(`SELECT level, sum(items)::int AS items, sum(total_length)::float8 AS body, sum(total_summary)::float8 AS summary
                         FROM bm25_stats GROUP BY level ORDER BY level`),
  terms: await db.query(`SELECT level, lexeme, sum(df)::int AS df FROM bm25_terms GROUP BY level, lexeme HAVING sum(df) > 0 ORDER BY level, lexeme`),
  postings: await db.query('SELECT count(*)::int AS p FROM passage_postings'),
  // Joined here: links by target and documents by id live on different shards.
  links: await (async () => {
    const keys = new Map((await db.query<{ id: number; key: string }>('SELECT id, key FROM documents')).map((d) => [d.id, d.key]));
    const links = await db.query<{ target: string; t: number | null }>('SELECT target, target_document_id AS t FROM links');
    return links.map((l) => `${l.target}->${l.t === null ? null : keys.get(l.t)}`).sort();
  })(),
  pending: await db.query('SELECT count(*)::int AS n FROM pending_documents'),
});

describe('Citus: writes keep BM25 statistics and links as on one server', () => {
  it('ingest, re-ingest with changes, and delete give the same statistics, postings and links', async () => {
    const citus = await createCitusDatabase();
    const single = await createSingleDatabase();
    try {
      for (const db of [citus.db, single.db]) {
        await ingest(
          db,
          Array.from({ length: 12 }, (_, i) => doc(i)),
          { ...DEFAULT_INGEST_OPTIONS, concurrency: 4 },
        );
        await ingest(db, [doc(3, 'violin violin'), doc(7, 'senate')], DEFAULT_INGEST_OPTIONS);
        const [{ id }] = await db.query<{ id: number }>("SELECT id FROM documents WHERE key = 'k5'");
        expect(await deleteDocument(db, id)).toBe(true);
      }
      const [a, b] = [await state(citus.db), await state(single.db)];
      expect(a.terms.length).toBeGreaterThan(5);
      expect(a).toEqual(b);
    } finally {
      await citus.drop();
      await single.drop();
    }
  });
});

describe('Citus: a worker down', () => {
  it('retrieval fails with SHARD_UNAVAILABLE naming the worker, and answers again once it is back', async () => {
    const citus = await createCitusDatabase();
    const node = citus.workers.length; // the last worker, node N of the cluster script
    try {
      await ingest(
        citus.db,
        Array.from({ length: 12 }, (_, i) => doc(i)),
        DEFAULT_INGEST_OPTIONS,
      );
      const ask = () =>
        search(citus.db, {
          mode: 'LEXICAL',
          documentModel: { id: 0, dimension: 1 },
          passageModel: { id: 0, dimension: 1 },
          questionText: 'river glacier',
          k1: 5,
          k2: 5,
          lambda: 1,
          exact: true,
        });
      expect((await ask()).passages.length).toBe(5);
      cluster('stop-node', String(node));
      try {
        const error = await ask().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe(ErrorCode.SHARD_UNAVAILABLE);
        expect((error as DomainError).details).toEqual({ worker: citus.workers[node - 1] });
        expect((error as DomainError).message).toContain(citus.workers[node - 1]);
        expect((error as DomainError).message).not.toMatch(/SELECT|ERROR|postgres@/);
      } finally {
        cluster('start-node', String(node));
      }
      expect((await ask()).passages.length).toBe(5);
    } finally {
      await citus.drop();
    }
  });
});

describe('Citus: misconfiguration is refused with what to run', () => {
  it('DHR_DISTRIBUTED=citus on a server without Citus', async () => {
    const single = await createSingleDatabase();
    try {
      await expect(migrate(single.db, undefined, { distributed: 'citus' })).rejects.toThrow(/citus extension is not installed.*CREATE EXTENSION citus/);
    } finally {
      await single.drop();
    }
  });

  it('tables not distributed, and a distributed store opened without DHR_DISTRIBUTED', async () => {
    const citus = await createCitusDatabase({ migrated: false });
    try {
      await migrate(citus.db); // numbered migrations only: nothing distributed
      await expect(assertDistribution(citus.db, 'citus')).rejects.toThrow(/not distributed: documents, .*Run `dhr migrate` with DHR_DISTRIBUTED=citus/);
      await migrate(citus.db, undefined, { distributed: 'citus' });
      await expect(migrate(citus.db)).rejects.toThrow(/distributed with Citus.*set DHR_DISTRIBUTED=citus/);
    } finally {
      await citus.drop();
    }
  });
});
