/**
 * Faults on the bulk ingest path: `dhr ingest` of a JSONL file (many documents,
 * small batches) is killed with SIGKILL — by the test, as soon as the child reports a committed
 * batch, and by itself inside a batch's transaction once its rows and postings are written but not
 * committed (DHR_TEST_CRASH_AFTER=batch:N). A bad line fails alone. Afterwards every document in
 * the store must be whole (all its passages, each with its full-text vector and postings, a pending
 * record for the embedding still to come), the BM25 statistics must equal a brute-force recount
 * of the rows (nothing half-indexed), and running the same command again must finish the job.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareDocument } from '../src/ingest/prepare';
import { DEFAULT_INGEST_OPTIONS, type DocumentInput } from '../src/ingest/types';
import { packageRoot } from '../src/paths';
import type { Database } from '../src/store/db';
import { createProcessStore, type ProcessStore } from './helpers/database';
import { prng } from './helpers/prng';
import { cliEntry } from './helpers/cli-entry';

const DOCUMENTS = 240;
const BATCH_PASSAGES = '40';
const WORDS = ['river', 'harbour', 'grain', 'timber', 'mountain', 'valley', 'railway', 'freight', 'winter', 'plain', 'border', 'coast', 'the', 'of'];

function corpus(): DocumentInput[] {
  const rand = prng(29);
  const sentence = () => Array.from({ length: 4 + Math.floor(rand() * 10) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ') + '.';
  return Array.from({ length: DOCUMENTS }, (_, d) => ({
    key: `doc-${d}`,
    title: `Country ${d}`,
    abstract: `${sentence()} See [[doc-${(d + 1) % DOCUMENTS}]].`,
    sections: Array.from({ length: 2 + (d % 3) }, (_, s) => ({ title: `Topic ${s}`, text: `${sentence()} ${sentence()} Note quokka${d}.` })),
  }));
}

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `dhr ingest` in a child; `killWhen` sees its stderr as it grows and SIGKILLs it when true. */
function ingestCli(file: string, env: Record<string, string>, killWhen?: (stderr: string) => boolean): Promise<Child> {
  const root = packageRoot();
  const child = spawn(process.execPath, [...cliEntry(root), 'ingest', file, '--no-embed', '--batch-passages', BATCH_PASSAGES], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => {
    stderr += d;
    if (killWhen?.(stderr)) child.kill('SIGKILL');
  });
  const limit = setTimeout(() => child.kill('SIGKILL'), 200_000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

const count = async (db: Database, sql: string): Promise<number> => (await db.query<{ n: number }>(sql))[0].n;

/** Rows of one query not in the other, both ways: 0 when the two sets are equal. */
const difference = (db: Database, a: string, b: string) =>
  count(db, `SELECT count(*)::int AS n FROM ((${a}) EXCEPT ALL (${b}) UNION ALL ((${b}) EXCEPT ALL (${a}))) x`);

// A level's statistics are the sum over its rows (one per writer slot since migration 0013).
const STATS =
  'SELECT level, sum(items)::bigint AS items, sum(total_length) AS total_length, sum(total_summary) AS total_summary FROM bm25_stats GROUP BY level';
const TERMS_P = `SELECT level, lexeme, sum(df)::int FROM bm25_terms WHERE level = 'p' GROUP BY level, lexeme HAVING sum(df) > 0`;

const POSTINGS = `SELECT p.id, p.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1) AS tf FROM passages p, unnest(p.search) t`;

/**
 * What the store holds, checked whole: documents complete, BM25 equal to a recount from the rows.
 * Returns the keys present.
 */
async function expectConsistent(db: Database, expected: Map<string, number>): Promise<string[]> {
  const documents = await db.query<{ key: string; passages: number; indexed: number; pending: boolean }>(
    `SELECT d.key, count(p.id)::int AS passages, count(p.search)::int AS indexed,
            EXISTS (SELECT 1 FROM pending_documents q WHERE q.document_id = d.id) AS pending
     FROM documents d LEFT JOIN passages p ON p.document_id = d.id GROUP BY d.id, d.key ORDER BY d.key`,
  );
  for (const d of documents) {
    expect({ key: d.key, passages: d.passages, indexed: d.indexed, pending: d.pending }).toEqual({
      key: d.key,
      passages: expected.get(d.key),
      indexed: expected.get(d.key),
      pending: true,
    });
  }
  // Passage level: postings, document frequencies, items and total length, recounted from the tsvectors.
  expect(
    await difference(db, `SELECT lexeme, document_id, id, tf::real FROM (${POSTINGS}) x`, 'SELECT lexeme, document_id, passage_id, tf FROM passage_postings'),
  ).toBe(0);
  expect(await difference(db, `SELECT 'p', lexeme, count(*)::int FROM (${POSTINGS}) x GROUP BY lexeme`, TERMS_P)).toBe(0);
  expect(
    await difference(
      db,
      `SELECT count(DISTINCT id)::bigint, coalesce(sum(tf), 0)::float8 FROM (${POSTINGS}) x`,
      `SELECT items, total_length FROM (${STATS}) s WHERE level = 'p'`,
    ),
  ).toBe(0);
  // Document level: lengths of the full text and of the summary, their sums and the document count.
  const lengths = `WITH body AS (SELECT document_id AS id, sum(tf) AS b FROM (${POSTINGS}) x GROUP BY 1),
    summary AS (SELECT d.id, sum(coalesce(array_length(t.positions, 1), 1)) AS s FROM documents d, unnest(to_tsvector('english'::regconfig, d.summary)) t GROUP BY 1)
    SELECT coalesce(body.id, summary.id) AS document_id, coalesce(b, 0)::real AS body, coalesce(s, 0)::real AS summary FROM body FULL JOIN summary ON summary.id = body.id`;
  expect(await difference(db, lengths, 'SELECT document_id, length_body, length_summary FROM document_lengths')).toBe(0);
  expect(
    await difference(
      db,
      `SELECT count(*)::bigint, coalesce(sum(body), 0)::float8, coalesce(sum(summary), 0)::float8 FROM (${lengths}) l`,
      `SELECT items, total_length, total_summary FROM (${STATS}) s WHERE level = 'd'`,
    ),
  ).toBe(0);
  if (documents.length > 0) expect(await count(db, 'SELECT count(*)::int AS n FROM document_postings')).toBeGreaterThan(0);
  return documents.map((d) => d.key);
}

describe('bulk ingest killed with SIGKILL, then run again', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-bulk-crash-'));
  const clean = join(work, 'corpus.jsonl');
  // A bad line in the middle fails alone; the documents after it still go in.
  const withBad = join(work, 'with-bad.jsonl');
  const expected = new Map<string, number>();
  /** The keys of each batch, as bulk-ingest plans them: a batch closes once it holds BATCH_PASSAGES passages. */
  const batches: string[][] = [];

  beforeAll(() => {
    const docs = corpus();
    let size = Infinity;
    for (const d of docs) {
      const passages = prepareDocument(d, DEFAULT_INGEST_OPTIONS).passages.length;
      expected.set(d.key!, passages);
      if (size >= Number(BATCH_PASSAGES)) {
        batches.push([]);
        size = 0;
      }
      batches[batches.length - 1].push(d.key!);
      size += passages;
    }
    const lines = docs.map((d) => JSON.stringify(d));
    writeFileSync(clean, lines.join('\n') + '\n');
    lines.splice(DOCUMENTS / 2, 0, JSON.stringify({ key: 'bad', title: '' }));
    writeFileSync(withBad, lines.join('\n') + '\n');
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Waits (at most 30 s) until no other session is connected to this database. */
  async function killedSessionsGone(db: Database): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const others = await count(db, 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
      if (others === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Checks what the killed run left, runs it again, checks the result; returns the keys the killed run left. */
  async function killThenResume(store: ProcessStore, killed: Child, file: string): Promise<Set<string>> {
    expect(killed.signal).toBe('SIGKILL');
    let present: string[];
    {
      const { db, close } = await store.open();
      try {
        // PostgreSQL finishes a COMMIT the killed client had already sent: read once its sessions are gone.
        if (store.kind === 'postgres') await killedSessionsGone(db);
        present = await expectConsistent(db, expected);
      } finally {
        await close();
      }
    }
    // Whole batches only, never part of one; not all of them.
    const keys = new Set(present);
    const partial = batches.filter((batch) => batch.some((k) => keys.has(k)) && !batch.every((k) => keys.has(k)));
    expect(partial).toEqual([]);
    expect(present.length).toBeLessThan(DOCUMENTS);

    const rerun = await ingestCli(file, store.env);
    const bad = file === withBad ? 1 : 0;
    expect(rerun.code).toBe(bad ? 2 : 0);
    if (bad) expect(rerun.stderr).toMatch(/failed: document "bad": missing title/);
    expect(rerun.stdout).toMatch(
      new RegExp(`ingested ${DOCUMENTS + bad} documents: ${DOCUMENTS - present.length} created, 0 updated, ${present.length} unchanged, ${bad} failed`),
    );
    const { db, close } = await store.open();
    try {
      expect(await expectConsistent(db, expected)).toHaveLength(DOCUMENTS);
      // Links that a killed batch's target left unresolved found it on the re-run.
      expect(await count(db, 'SELECT count(*)::int AS n FROM links WHERE target_document_id IS NULL')).toBe(0);
    } finally {
      await close();
    }
    return keys;
  }

  it('killed by the test once a batch has committed: the committed batches are whole, the re-run finishes', async () => {
    const store = await createProcessStore(join(work, 'outside'));
    try {
      // The progress line the child prints at its first committed document (then every few seconds).
      const killed = await ingestCli(clean, store.env, (stderr) => /ingest \[[#.]+\] [1-9]\d*\//.test(stderr));
      expect((await killThenResume(store, killed, clean)).size).toBeGreaterThan(0);
    } finally {
      await store.drop();
    }
  }, 400_000);

  it('killed inside a batch, its rows and postings written but not committed: that batch is absent', async () => {
    const store = await createProcessStore(join(work, 'inside'));
    try {
      const killed = await ingestCli(withBad, { ...store.env, DHR_TEST_CRASH_AFTER: 'batch:4' });
      const left = await killThenResume(store, killed, withBad);
      // Nothing of batch 4; on PGlite (one batch at a time) exactly batches 1–3. On a server batches
      // overlap, so others may have committed first, or none.
      expect(batches[3].filter((k) => left.has(k))).toEqual([]);
      if (store.kind === 'pglite') expect([...left].sort()).toEqual(batches.slice(0, 3).flat().sort());
    } finally {
      await store.drop();
    }
  }, 400_000);

  // PostgreSQL only: a load into an empty store there drops the postings' indexes until its end.
  (process.env.DATABASE_URL ? it : it.skip)(
    'killed inside a batch of a load whose postings indexes wait for its end: the re-run builds them and finishes',
    async () => {
      const store = await createProcessStore(join(work, 'deferred'));
      const indexes = `SELECT indexname FROM pg_indexes WHERE tablename IN ('passage_postings', 'document_postings') ORDER BY 1`;
      try {
        const killed = await ingestCli(clean, { ...store.env, BULK_DEFER_INDEXES_PASSAGES: '1', DHR_TEST_CRASH_AFTER: 'batch:4' });
        {
          const { db, close } = await store.open();
          try {
            // What the killed run left: the record of what it dropped, and none of the indexes.
            expect((await db.query('SELECT name FROM deferred_indexes')).length).toBe(5);
            expect(await db.query(indexes)).toEqual([]);
          } finally {
            await close();
          }
        }
        await killThenResume(store, killed, clean);
        const { db, close } = await store.open();
        try {
          expect((await db.query(indexes)).length).toBe(5);
          expect(await db.query('SELECT name FROM deferred_indexes')).toEqual([]);
        } finally {
          await close();
        }
      } finally {
        await store.drop();
      }
    },
    400_000,
  );
});
