/**
 * Crash consistency of ingest: the real CLI (`dhr ingest` of a Markdown corpus, a
 * tiny real ONNX model) SIGKILLs itself at a chosen point (DHR_TEST_CRASH_AFTER) — mid-write,
 * after the write (before the full-text index: a kill inside that single UPDATE rolls it back to
 * the same state), after the index, mid-embedding — then the same command runs again, or the
 * server starts. Afterwards every passage must have its tsvector and BM25 postings, every document
 * and passage a vector of the active models, nothing may be left pending, and LEXICAL and
 * HIERARCHICAL must find every passage of a document the killed run left unfinished.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { packageRoot } from '../src/paths';
import { retrieve } from '../src/retrieval/retrieve';
import type { Database } from '../src/store/db';
import { pendingWork } from '../src/store/pending';
import { createProcessStore, type ProcessStore } from './helpers/database';
import { writeTinyModel } from './helpers/tiny-model';
import { cliEntry } from './helpers/cli-entry';

const DOCUMENTS = 30;
const SECTIONS = 5;
const WORDS = ['river', 'harbour', 'grain', 'timber', 'mountain', 'valley', 'railway', 'freight', 'winter', 'plain', 'border', 'coast'];

/** Document d: an abstract and SECTIONS sections, each passage carrying the document's own word. */
function writeCorpus(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (let d = 0; d < DOCUMENTS; d++) {
    const marker = `quokka${d}`;
    const sentence = (s: number) => Array.from({ length: 12 }, (_, w) => WORDS[(d * 7 + s * 3 + w) % WORDS.length]).join(' ') + `. Note ${marker} ${s}.`;
    const sections = Array.from({ length: SECTIONS }, (_, s) => `## Topic ${s}\n\n${sentence(s)} ${sentence(s + 1)}\n`).join('\n');
    writeFileSync(join(dir, `doc-${String(d).padStart(2, '0')}.md`), `# Country ${d}\n\n${sentence(99)}\n\n${sections}`);
  }
}

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>): { child: ReturnType<typeof spawn>; done: Promise<Child>; output: () => string } {
  const root = packageRoot();
  const child = spawn(process.execPath, [...cliEntry(root), ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENCODER_THREADS: '1', EMBED_BATCH_SIZE: '8', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const limit = setTimeout(() => child.kill('SIGKILL'), 200_000);
  const done = new Promise<Child>((resolve) =>
    child.on('exit', (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return { child, done, output: () => stdout };
}

const one = async (db: Database, sql: string): Promise<number> => (await db.query<{ n: number }>(sql))[0].n;

/** Everything the pipeline should have done, counted from the rows. */
async function missing(db: Database) {
  return {
    unindexed: await one(db, 'SELECT count(*)::int AS n FROM passages WHERE search IS NULL'),
    // A passage with lexemes and no postings is invisible to BM25.
    withoutPostings: await one(
      db,
      `SELECT count(*)::int AS n FROM passages p WHERE length(p.search) > 0
         AND NOT EXISTS (SELECT 1 FROM passage_postings pp WHERE pp.passage_id = p.id)`,
    ),
    bm25Items: await one(db, `SELECT ((SELECT items FROM bm25_stats WHERE level = 'p') - (SELECT count(*) FROM passages WHERE length(search) > 0))::int AS n`),
    documentsWithoutVector: await one(
      db,
      `SELECT count(*)::int AS n FROM documents d WHERE NOT EXISTS (
         SELECT 1 FROM document_embeddings e JOIN active_encoders a ON a.role = 'document' AND a.model_id = e.model_id
         WHERE e.document_id = d.id AND e.content_hash = d.content_hash)`,
    ),
    passagesWithoutVector: await one(
      db,
      `SELECT count(*)::int AS n FROM passages p WHERE NOT EXISTS (
         SELECT 1 FROM passage_embeddings e JOIN active_encoders a ON a.role = 'passage' AND a.model_id = e.model_id
         WHERE e.passage_id = p.id)`,
    ),
    records: await one(db, 'SELECT count(*)::int AS n FROM pending_documents'),
  };
}

const COMPLETE = { unindexed: 0, withoutPostings: 0, bm25Items: 0, documentsWithoutVector: 0, passagesWithoutVector: 0, records: 0 };

describe('ingest killed with SIGKILL, then resumed', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-resume-'));
  const corpus = join(work, 'corpus');
  let modelDir: string;

  beforeAll(async () => {
    writeCorpus(corpus);
    modelDir = await writeTinyModel(work, 'tiny-resume');
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Kills `dhr ingest` at the point, checks what it left, and returns the documents it left unfinished. */
  async function killAt(store: ProcessStore, point: string): Promise<number[]> {
    const env = { ...store.env, ENCODER: modelDir };
    const killed = await cli(['ingest', corpus], { ...env, DHR_TEST_CRASH_AFTER: point }).done;
    expect(killed.signal).toBe('SIGKILL');
    const { db, close } = await store.open();
    try {
      const left = await db.query<{ id: number }>('SELECT document_id AS id FROM pending_documents ORDER BY 1');
      const pending = await pendingWork(db);
      const rows = await missing(db);
      // Each kill point leaves its own kind of gap, and pendingWork reports exactly the rows' gaps.
      expect(pending).toEqual({
        unindexedPassages: rows.unindexed,
        unembeddedPassages: rows.passagesWithoutVector,
        unembeddedDocuments: rows.documentsWithoutVector,
      });
      if (point.startsWith('write') || point === 'index:0') expect(pending.unembeddedPassages).toBeGreaterThan(0);
      // The corpus (30 documents) takes the bulk path, which writes passages with their full-text
      // vector and postings in the batch's transaction: a kill after the write leaves none unindexed.
      if (point.startsWith('write')) expect(pending.unindexedPassages).toBe(0);
      if (point === 'index:0' || point.startsWith('embed')) expect(pending.unindexedPassages).toBe(0);
      if (point.startsWith('embed')) expect(pending.unembeddedPassages).toBeGreaterThan(0);
      expect(left.length).toBeGreaterThan(0);
      return left.map((r) => r.id);
    } finally {
      await close();
    }
  }

  /** The store is complete, and a document the killed run left unfinished is found by LEXICAL and HIERARCHICAL. */
  async function expectComplete(store: ProcessStore, unfinished: number[]): Promise<void> {
    const { db, close } = await store.open();
    const models = await ModelRegistry.open(db, { encoders: loadConfig({ ENCODER: modelDir }).encoders });
    try {
      expect(await missing(db)).toEqual(COMPLETE);
      expect(await pendingWork(db)).toEqual({ unindexedPassages: 0, unembeddedPassages: 0, unembeddedDocuments: 0 });
      expect(await one(db, 'SELECT count(*)::int AS n FROM documents')).toBe(DOCUMENTS);
      const documentId = unfinished[unfinished.length - 1];
      const [{ text }] = await db.query<{ text: string }>('SELECT text FROM passages WHERE document_id = $1 LIMIT 1', [documentId]);
      const marker = /quokka\d+/.exec(text)![0];
      const passages = (await db.query<{ id: number }>('SELECT id FROM passages WHERE document_id = $1 ORDER BY id', [documentId])).map((r) => r.id);
      expect(passages.length).toBeGreaterThan(SECTIONS);

      const lexical = await retrieve(db, undefined, { question: marker, k1: 100, k2: 1000, mode: 'LEXICAL' });
      expect(lexical.passages.map((p) => p.passageId).sort((a, b) => a - b)).toEqual(passages);

      const targets = await models.current();
      // Exact: every document is a stage-1 candidate (k1 > corpus), so stage 2 returns every embedded passage.
      const dense = await retrieve(db, targets, { question: marker, k1: 100, k2: 1000, mode: 'HIERARCHICAL' }, { exact: true });
      expect(dense.documents.map((d) => d.documentId)).toContain(documentId);
      const found = dense.passages.filter((p) => p.documentId === documentId).map((p) => p.passageId);
      expect(found.sort((a, b) => a - b)).toEqual(passages);
    } finally {
      await models.close();
      await close();
    }
  }

  it.each(['write:10', `write:${DOCUMENTS}`, 'index:0', 'embed:40'])(
    'killed at %s: re-running dhr ingest finishes every document',
    async (point) => {
      const store = await createProcessStore(join(work, point.replace(':', '-')));
      try {
        const unfinished = await killAt(store, point);
        const rerun = await cli(['ingest', corpus], { ...store.env, ENCODER: modelDir }).done;
        expect(rerun.stderr).not.toMatch(/error/i);
        expect(rerun.code).toBe(0);
        if (point !== 'write:10') {
          // Every document was written by the killed run: the re-run finds them unchanged, and says it finished them.
          expect(rerun.stdout).toMatch(new RegExp(`${DOCUMENTS} unchanged`));
          expect(rerun.stdout).toMatch(/finished \d+ unchanged documents that an interrupted run had left/);
        }
        await expectComplete(store, unfinished);
      } finally {
        await store.drop();
      }
    },
    400_000,
  );

  it('killed after the write: dhr serve finishes the index at start and the vectors in the background', async () => {
    const store = await createProcessStore(join(work, 'serve'));
    try {
      const unfinished = await killAt(store, `write:${DOCUMENTS}`);
      const server = cli(['serve', '--port', '0'], { ...store.env, ENCODER: modelDir, JOB_WORKERS: '0' });
      const url = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => {
          const m = /ready at (\S+)/.exec(server.output());
          if (m) {
            clearInterval(poll);
            resolve(m[1]);
          }
        }, 50);
        void server.done.then((c) => {
          clearInterval(poll);
          reject(new Error(`serve exited: ${c.stderr}`));
        });
      });
      // The index is finished before the server answers; vectors follow while it answers.
      const stats = async () => {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ stats { documents pending { unindexedPassages unembeddedPassages unembeddedDocuments } } }' }),
        });
        return ((await res.json()) as { data: { stats: { documents: number; pending: Record<string, number> } } }).data.stats;
      };
      const first = await stats();
      expect(first.documents).toBe(DOCUMENTS);
      expect(first.pending.unindexedPassages).toBe(0);
      let last = first;
      while (last.pending.unembeddedPassages + last.pending.unembeddedDocuments > 0) {
        await new Promise((r) => setTimeout(r, 200));
        last = await stats();
      }
      server.child.kill('SIGTERM');
      await server.done;
      await expectComplete(store, unfinished);
    } finally {
      await store.drop();
    }
  }, 400_000);
});
