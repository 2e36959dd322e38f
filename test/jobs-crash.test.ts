/**
 * Crash safety of re-embedding jobs: a worker process (the real CLI, the real default model, the
 * suite's real database) is killed with SIGKILL in the middle of a job, then started again. The job
 * must complete with exactly one vector per document and passage, exact progress counts, and no
 * item encoded twice except those of the batch that was in flight.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerModelFromPath } from '../src/pipeline/jobs/models';
import { packageRoot } from '../src/paths';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import { migrate } from '../src/store/migrate';
import { createProcessStore, type ProcessStore } from './helpers/database';
import { cliEntry } from './helpers/cli-entry';

const BATCH = 16;
const SENTENCES = [
  'The river crosses the northern plain before it reaches the sea.',
  'Its capital grew around a harbour that traded grain and timber.',
  'Mountains along the border keep the winters long and dry.',
  'Most people live in the valleys, where the soil is rich.',
  'The railway opened in the last century and still carries freight.',
];

function corpus() {
  return Array.from({ length: 40 }, (_, d) => ({
    key: `country-${d}`,
    title: `Country ${d}`,
    abstract: SENTENCES[d % 5],
    sections: Array.from({ length: 6 }, (_, s) => ({ title: `Topic ${s}`, text: `${SENTENCES[(d + s) % 5]} Note ${d}.${s}.` })),
  }));
}

interface Child {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `dhr reembed` in a child process; `killWhen` is polled and SIGKILLs it when true. */
function reembed(env: Record<string, string>, trace: string, killWhen?: () => boolean): Promise<Child> {
  const root = packageRoot();
  const child = spawn(process.execPath, [...cliEntry(root), 'reembed', '--model', 'use-lite', '--trace', trace], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', JOB_BATCH_SIZE: String(BATCH), ENCODER_THREADS: '1', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const poll = killWhen
    ? setInterval(() => {
        if (killWhen()) child.kill('SIGKILL');
      }, 10)
    : undefined;
  const limit = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      clearInterval(poll);
      clearTimeout(limit);
      resolve({ code, signal, stdout, stderr });
    }),
  );
}

const traceLines = (trace: string) => (existsSync(trace) ? readFileSync(trace, 'utf8').trim().split('\n').filter(Boolean) : []);

describe('re-embedding job killed with SIGKILL', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-crash-'));
  let store: ProcessStore;
  let env: Record<string, string>;

  beforeAll(async () => {
    store = await createProcessStore(work);
    env = store.env;
    // PGlite is one process at a time: the test holds the directory only while no child has it.
    const { db, close } = await store.open();
    await migrate(db);
    const ingested = await ingestDocuments(db, corpus(), DEFAULT_INGEST_OPTIONS);
    expect(ingested.failed).toBe(0);
    await registerModelFromPath(db, 'use-lite');
    await close();
  });
  afterAll(async () => {
    await store.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('resumes after the kill and finishes with one vector per item and exact progress', async () => {
    const trace = join(work, 'trace');
    // Kill once a few batches were encoded: documents are done and passages are under way.
    const killed = await reembed(env, trace, () => traceLines(trace).filter((l) => l.startsWith('passages')).length >= 3);
    expect(killed.signal).toBe('SIGKILL');

    let handle = await store.open();
    let db = handle.db;
    const [mid] = await db.query<{ status: string; documentsDone: number; passagesDone: number; passagesTotal: number }>(
      `SELECT status, documents_done AS "documentsDone", passages_done AS "passagesDone", passages_total AS "passagesTotal" FROM embedding_jobs`,
    );
    expect(mid.status).toBe('running');
    expect(mid.documentsDone).toBe(40);
    expect(mid.passagesDone).toBeGreaterThan(0);
    expect(mid.passagesDone).toBeLessThan(mid.passagesTotal);
    // Progress and vectors were committed together: the counts agree exactly.
    const [{ n: written }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passage_embeddings');
    expect(written).toBe(mid.passagesDone);
    await handle.close();

    const resumed = await reembed(env, trace);
    expect(resumed.stderr).toMatch(/attaching to job 1/);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/job 1 succeeded: 40 documents, \d+ passages/);

    handle = await store.open();
    db = handle.db;
    try {
      const [counts] = await db.query<{ documents: number; passages: number; de: number; pe: number; distinctPe: number }>(
        `SELECT (SELECT count(*)::int FROM documents) AS documents, (SELECT count(*)::int FROM passages) AS passages,
                (SELECT count(*)::int FROM document_embeddings) AS de, (SELECT count(*)::int FROM passage_embeddings) AS pe,
                (SELECT count(DISTINCT passage_id)::int FROM passage_embeddings) AS "distinctPe"`,
      );
      expect(counts.de).toBe(counts.documents);
      expect(counts.pe).toBe(counts.passages);
      expect(counts.distinctPe).toBe(counts.passages);
      const [job] = await db.query<{ status: string; passagesDone: number; passagesTotal: number }>(
        `SELECT status, passages_done AS "passagesDone", passages_total AS "passagesTotal" FROM embedding_jobs`,
      );
      expect(job).toEqual({ status: 'succeeded', passagesDone: counts.passages, passagesTotal: counts.passages });

      // Every item was encoded; only the batch in flight at the kill was encoded twice.
      const ids = traceLines(trace)
        .filter((l) => l.startsWith('passages'))
        .flatMap((l) => l.split(' ')[1].split(',').map(Number));
      const unique = new Set(ids);
      expect(unique.size).toBe(counts.passages);
      expect(ids.length - unique.size).toBeLessThanOrEqual(BATCH);
    } finally {
      await handle.close();
    }
  });
});
