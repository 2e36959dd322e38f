/**
 * Concurrent ingests of one key: a re-ingest replaces a document's passages while
 * another ingest of the key is between encoding those passages and writing their vectors. Every
 * request ends as CREATED / UPDATED / UNCHANGED or a typed CONFLICT asking for a retry (never an
 * internal error), and the store keeps one whole version per key: its passages from one
 * submitted version, each with one vector of the active model, no vector without its passage, the
 * full-text index and BM25 statistics agreeing with the passages, nothing left pending.
 */
import { Client } from 'pg';
import { EncoderSet } from '../src/encoders/set';
import type { EncodeResult, Encoder, EncoderRole } from '../src/encoders/types';
import { finishPendingStep } from '../src/pipeline/pending';
import { indexLexical } from '../src/store/lexical';
import type { Queryable } from '../src/store/db';
import { pendingWork } from '../src/store/pending';
import { LINK_RESOLUTION_LOCK } from '../src/store/write';
import { writePassageEmbeddings, type EmbeddingModelRow } from '../src/store/embeddings';
import { createTestApi, type GraphQLResult, type TestApi } from './helpers/api';
import { RecordingEncoder } from './helpers/recording-encoder';

const INGEST = `mutation($docs: [DocumentInput!]!) {
  ingestDocuments(documents: $docs) { created updated unchanged failed outcomes { status message } embedded { documents passages } }
}`;

/** One submitted version of a key: every passage carries its tag, so the store shows which version it holds. */
const version = (key: string, tag: string) => ({
  key,
  title: `FK ${key}`,
  sections: [
    { title: 'A', text: `Alpha section of ${tag}: the river crosses the valley.` },
    { title: 'B', text: `Beta section of ${tag}: the bridge stands near the market.` },
  ],
});

/**
 * Holds the first passage encode after arm() until the returned open() is called: the ingest
 * that makes it stands between reading its pending passages and writing their vectors.
 */
class PassageGate extends RecordingEncoder {
  private armed?: { entered: (texts: string[]) => void; gate: Promise<void> };

  arm(): { entered: Promise<string[]>; open: () => void } {
    let open!: () => void;
    let entered!: (texts: string[]) => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const reached = new Promise<string[]>((resolve) => (entered = resolve));
    this.armed = { entered, gate };
    return { entered: reached, open };
  }

  override async encode(texts: readonly string[], role: EncoderRole, options?: { batchSize?: number }): Promise<EncodeResult> {
    const armed = this.armed;
    if (armed && role === 'passage') {
      this.armed = undefined;
      armed.entered([...texts]);
      await armed.gate;
    }
    return super.encode(texts, role, options);
  }
}

/** What a request ended as: its documents' statuses, or the code of its error. */
function outcomeOf(result: GraphQLResult): string[] {
  if (result.errors?.length) {
    return result.errors.map((e) => {
      const code = String(e.extensions?.code);
      if (code === 'CONFLICT') {
        expect(e.extensions?.retry).toBe(true);
        expect(e.message).toMatch(/again|retry/i);
      }
      return code;
    });
  }
  return result.data.ingestDocuments.outcomes.map((o: { status: string; message: string | null }) =>
    o.status === 'FAILED' ? `FAILED ${o.message}` : o.status,
  );
}

/**
 * Vector writes of this database waiting for a lock. Asked outside any transaction: one caches
 * pg_stat_activity at its first read.
 */
async function waitingWrites(db: Queryable): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO passage_embeddings%'`,
  );
  return n;
}

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('concurrent ingests of one key', () => {
  let api: TestApi;
  let base: EncoderSet;
  let gate: PassageGate;
  /** Every submitted version, by key: tag → its passages' texts. */
  const submitted = new Map<string, Set<string>>();

  const ingest = (key: string, tag: string) => {
    submitted.set(key, (submitted.get(key) ?? new Set()).add(tag));
    return api.exec(INGEST, { docs: [version(key, tag)] });
  };

  beforeAll(async () => {
    base = await EncoderSet.load();
    gate = new PassageGate(base.byRole.passage);
    const one: Encoder = gate;
    api = await createTestApi({}, EncoderSet.of({ questionDocument: one, document: one, questionPassage: one, passage: one }));
  });
  afterAll(async () => {
    await api?.close();
    await base?.close();
  });

  /** The store holds one whole, finished version of each key. */
  async function expectWhole(keys: readonly string[]): Promise<void> {
    const db = api.testDb.db;
    for (const key of keys) {
      const docs = await db.query<{ id: number }>('SELECT id FROM documents WHERE key = $1', [key]);
      expect(docs).toHaveLength(1);
      const passages = await db.query<{ text: string; vectors: number }>(
        `SELECT p.text, (SELECT count(*)::int FROM passage_embeddings e JOIN active_encoders a ON a.role = 'passage' AND a.model_id = e.model_id
                         WHERE e.document_id = p.document_id AND e.passage_id = p.id) AS vectors
         FROM passages p WHERE p.document_id = $1 ORDER BY p.ordinal`,
        [docs[0].id],
      );
      const tags = new Set(passages.map((p) => /of ([\w-]+):/.exec(p.text)?.[1]));
      expect(tags.size).toBe(1);
      const [tag] = tags;
      expect(submitted.get(key)!.has(tag!)).toBe(true);
      expect(passages).toHaveLength(2);
      expect(passages.map((p) => p.vectors)).toEqual([1, 1]);
      const [{ current }] = await db.query<{ current: number }>(
        `SELECT count(*)::int AS current FROM document_embeddings e JOIN documents d ON d.id = e.document_id
           JOIN active_encoders a ON a.role = 'document' AND a.model_id = e.model_id
         WHERE d.id = $1 AND e.content_hash = d.content_hash`,
        [docs[0].id],
      );
      expect(current).toBe(1);
    }
    const [orphans] = await db.query<{ vectors: number; postings: number; unindexed: number }>(
      `SELECT (SELECT count(*)::int FROM passage_embeddings e WHERE NOT EXISTS (
                 SELECT 1 FROM passages p WHERE p.id = e.passage_id AND p.document_id = e.document_id)) AS vectors,
              (SELECT count(*)::int FROM passage_postings pp WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.id = pp.passage_id)) AS postings,
              (SELECT count(*)::int FROM passages WHERE search IS NULL) AS unindexed`,
    );
    expect(orphans).toEqual({ vectors: 0, postings: 0, unindexed: 0 });
    // BM25 at the passage level agrees with the postings the passages left: one item per indexed
    // passage, each term's document frequency the passages holding it.
    const [{ items, indexed }] = await db.query<{ items: number; indexed: number }>(
      `SELECT (SELECT sum(items)::int FROM bm25_stats WHERE level = 'p') AS items,
              (SELECT count(DISTINCT passage_id)::int FROM passage_postings) AS indexed`,
    );
    expect(items).toBe(indexed);
    const drift = await db.query(
      `SELECT coalesce(t.lexeme, c.lexeme) AS lexeme, t.df, c.n FROM
         (SELECT lexeme, sum(df)::int AS df FROM bm25_terms WHERE level = 'p' GROUP BY lexeme HAVING sum(df) <> 0) t
         FULL JOIN (SELECT lexeme, count(*)::int AS n FROM passage_postings GROUP BY lexeme) c ON c.lexeme = t.lexeme
       WHERE t.df IS DISTINCT FROM c.n`,
    );
    expect(drift).toEqual([]);
    expect(await pendingWork(db)).toEqual({ unindexedPassages: 0, unembeddedPassages: 0, unembeddedDocuments: 0 });
  }

  it('an ingest whose passages a re-ingest replaced while it encoded them skips their vectors', async () => {
    expect(outcomeOf(await ingest('repro/fk/held', 'v0'))).toEqual(['CREATED']);
    const held = gate.arm();
    const first = ingest('repro/fk/held', 'v1');
    const heldTexts = await held.entered;
    expect(heldTexts.every((t) => t.includes('of v1:'))).toBe(true);

    // On a server, the re-ingest is held inside its transaction after replacing the passages (it
    // waits for the link lock taken here), so the held vectors are written while the old passages'
    // delete is in flight: the window the foreign key error came from.
    const locker = api.testDb.url ? new Client({ connectionString: api.testDb.url }) : undefined;
    await locker?.connect();
    try {
      await locker?.query('SELECT pg_advisory_lock($1)', [LINK_RESOLUTION_LOCK]);
      const second = ingest('repro/fk/held', 'v2');
      if (locker) {
        const linkWaiters = async () =>
          (await locker.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1`, [LINK_RESOLUTION_LOCK]))
            .rows[0].n as number;
        await until(async () => (await linkWaiters()) > 0, 're-ingest waiting for the link lock');
        held.open();
        await until(async () => (await waitingWrites(api.testDb.db)) > 0, 'held vector write waiting for the re-ingest');
        await locker.query('SELECT pg_advisory_unlock($1)', [LINK_RESOLUTION_LOCK]);
      } else {
        // One connection (PGlite): the re-ingest runs to its end while the first one is held.
        expect(outcomeOf(await second)).toEqual(['UPDATED']);
        held.open();
      }
      const [a, b] = await Promise.all([first, second]);
      expect(outcomeOf(a)).toEqual(['UPDATED']);
      expect(outcomeOf(b)).toEqual(['UPDATED']);
      // The window was hit: the passages the held encode read are gone (their vectors were skipped).
      const [{ n }] = await api.testDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM passages WHERE text LIKE '%of v1:%'`);
      expect(n).toBe(0);
    } finally {
      await locker?.end();
    }
    await expectWhole(['repro/fk/held']);
  });

  it('8 writers on 3 keys: every request ends well, each key holds one whole version', async () => {
    const keys = ['repro/fk/0', 'repro/fk/1', 'repro/fk/2'];
    const rounds = 4;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      const ends: string[] = [];
      for (let r = 0; r < rounds; r++) ends.push(...outcomeOf(await ingest(keys[w % keys.length], `w${w}-r${r}`)));
      return ends;
    });
    const ends = (await Promise.all(writers)).flat();
    expect(ends).toHaveLength(8 * rounds);
    for (const end of ends) expect(['CREATED', 'UPDATED', 'UNCHANGED', 'CONFLICT']).toContain(end);
    await expectWhole(keys);
  });

  // A server: on PGlite the finisher's transaction holds the one connection, and a writer waits for it by design.
  (process.env.DATABASE_URL ? it : it.skip)('a re-ingest does not wait for, nor deadlock with, the background finisher working on its document', async () => {
    const db = api.testDb.db;
    const key = 'repro/fk/1';
    // An abandoned record (an ingest that died before embedding): no passage vectors, recorded as pending.
    const [{ id }] = await db.query<{ id: number }>('SELECT id FROM documents WHERE key = $1', [key]);
    await db.query('DELETE FROM passage_embeddings WHERE document_id = $1', [id]);
    await db.query('INSERT INTO pending_documents (document_id) VALUES ($1) ON CONFLICT DO NOTHING', [id]);
    const held = gate.arm();
    const step = finishPendingStep(db, (await api.models!.current())!, { limit: 8, olderThanSeconds: 0 }).then(
      (cleared) => cleared,
      (error: unknown) => error,
    );
    await held.entered;
    // The finisher holds its records while it encodes; the re-ingest replaces the passages it holds,
    // and ends before the finisher writes their vectors.
    let again: GraphQLResult | undefined;
    const reingest = ingest(key, 'finisher').then((result) => (again = result));
    try {
      await until(async () => again !== undefined, 'the re-ingest, while the finisher holds its document');
    } finally {
      held.open();
      await reingest;
    }
    expect(outcomeOf(again!)).toEqual(['UPDATED']);
    const finished = await step;
    if (finished instanceof Error) expect(finished).toMatchObject({ code: 'CONFLICT', details: { retry: true } });
    await expectWhole(['repro/fk/0', 'repro/fk/1', 'repro/fk/2']);
  });

  it('the store writes a batch of vectors whose passage a concurrent delete removes: the others go in', async () => {
    const db = api.testDb.db;
    const [model] = await db.query<EmbeddingModelRow>(
      `SELECT m.id, m.name, m.runtime, m.dimension, m.checksum, m.settings, m.source FROM embedding_models m
       JOIN active_encoders a ON a.model_id = m.id AND a.role = 'passage'`,
    );
    const [gone, kept] = await db.query<{ id: number; documentId: number }>(
      `SELECT p.id, p.document_id AS "documentId" FROM passages p JOIN documents d ON d.id = p.document_id WHERE d.key = 'repro/fk/0' ORDER BY p.id`,
    );
    await db.query('DELETE FROM passage_embeddings WHERE passage_id = ANY($1::int[])', [[gone.id, kept.id]]);
    const vector = new Float32Array(model.dimension).fill(1 / Math.sqrt(model.dimension));
    const rows = [gone, kept].map((p) => ({ passageId: p.id, documentId: p.documentId, vector }));
    const deleter = api.testDb.url ? new Client({ connectionString: api.testDb.url }) : undefined;
    if (!deleter) {
      await db.query('DELETE FROM passages WHERE id = $1', [gone.id]);
      expect(await writePassageEmbeddings(db, model, rows)).toBe(1);
      return;
    }
    // On a server the delete is in flight (uncommitted) while the write runs, and commits after it waits.
    await deleter.connect();
    try {
      await deleter.query('BEGIN');
      await deleter.query('DELETE FROM passages WHERE id = $1', [gone.id]);
      const write = writePassageEmbeddings(db, model, rows);
      await until(async () => (await waitingWrites(db)) > 0, 'the vector write waiting for the delete');
      await deleter.query('COMMIT');
      expect(await write).toBe(1);
      // Inside a caller's transaction the statement cannot run again: a typed CONFLICT to retry.
      await db.query('DELETE FROM passage_embeddings WHERE passage_id = $1', [kept.id]);
      await deleter.query('BEGIN');
      await deleter.query('DELETE FROM passages WHERE id = $1', [kept.id]);
      const inTransaction = db
        .transaction((tx) => writePassageEmbeddings(tx, model, rows.slice(1)))
        .then(
          (written) => written,
          (error: unknown) => error,
        );
      await until(async () => (await waitingWrites(db)) > 0, 'the vector write in a transaction waiting for the delete');
      await deleter.query('COMMIT');
      expect(await inTransaction).toMatchObject({ code: 'CONFLICT', details: { retry: true } });
    } finally {
      await deleter.end();
    }
  });

  // A server: PGlite has one connection, so no other transaction can hold a row.
  (process.env.DATABASE_URL ? it : it.skip)(
    'the index step skips passages another transaction holds instead of waiting (it deadlocked with a re-ingest)',
    async () => {
      const db = api.testDb.db;
      const [{ id }] = await db.query<{ id: number }>('SELECT id FROM documents WHERE key = $1', ['repro/fk/2']);
      const rows = await db.query<{ id: number }>('SELECT id FROM passages WHERE document_id = $1 ORDER BY ordinal', [id]);
      expect(rows).toHaveLength(2);
      await db.query('UPDATE passages SET search = NULL WHERE document_id = $1', [id]);
      const holder = new Client({ connectionString: api.testDb.url });
      await holder.connect();
      try {
        // What a re-ingest's delete holds: the row, to its commit.
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM passages WHERE id = $1 FOR UPDATE', [rows[0].id]);
        let timer: NodeJS.Timeout | undefined;
        const waited = new Promise<'waited'>((resolve) => (timer = setTimeout(() => resolve('waited'), 5000)));
        expect(await Promise.race([indexLexical(db, [id]), waited])).toBe(1);
        clearTimeout(timer);
        await holder.query('ROLLBACK');
        // The holder went without deleting it: the next index step (the finisher's) fills it.
        expect(await indexLexical(db, [id])).toBe(1);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end();
      }
      // (repro/fk/0 lost its passages to the case before.)
      await expectWhole(['repro/fk/1', 'repro/fk/2']);
    },
  );
});
