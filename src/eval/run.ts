/**
 * Runs a data set end to end through the product's own code paths: a fresh embedded database,
 * the ingest pipeline (write, full-text index, embed), then every question through `retrieve`.
 * Searches are exact (no HNSW), so the same data and model give the same rankings every run.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EncoderSet } from '../encoders/set';
import type { EncoderSpec } from '../encoders/spec';
import type { IngestOptions } from '../ingest/types';
import { retrieve, type RetrieveOptions } from '../retrieval/retrieve';
import { MODES, type RetrievalMode } from '../retrieval/modes';
import type { RankingLayer } from '../retrieval/parameters';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import { prepareEmbedding, type EmbeddingTargets } from '../pipeline/embed';
import { ingest } from '../pipeline/ingest';
import { migrate } from '../store/migrate';
import { PgliteDatabase } from '../store/pglite';
import { firstHitRank, hasAnswer } from './metrics';
import type { EvalDataset, EvalQuestion } from './types';

export interface PassageInfo {
  documentKey: string;
  /** Document title, then section titles. */
  titlePath: string[];
  text: string;
}

/** Where one question's first hits landed (1-based ranks, null: not in the results). */
export interface QuestionOutcome {
  id: string;
  docRank: number | null;
  /** Modes with a document stage: rank of the first gold document among the k1 it kept. */
  stageRank?: number | null;
  /** Undefined when the question has no gold section. */
  sectionRank?: number | null;
  /** Undefined when the question has no answer string. */
  answerRank?: number | null;
  ms: number;
  /** The first results, for failure examples. */
  top: PassageInfo[];
  /** The first result that hit each target, for failure examples. */
  hits: Partial<Record<'document' | 'section' | 'answer', PassageInfo>>;
}

export interface RunSetup {
  encoders: EncoderSpec;
  modelCacheDir?: string;
  encoderThreads: number;
  ingest: IngestOptions;
  embedBatchSize: number;
  log: (line: string) => void;
  /**
   * A folder to keep the loaded, embedded corpus in (PGlite on disk) and to reuse on the next run
   * with the same data, model and ingest settings: for tuning runs. Off for reports.
   */
  corpusCacheDir?: string;
}

export interface Corpus {
  db: Database;
  targets: EmbeddingTargets;
  passages: Map<number, PassageInfo>;
  documentKeys: Map<number, string>;
  stats: {
    documents: number;
    failed: number;
    passages: number;
    sections: number;
    ingestSeconds: number;
    embedSeconds: number;
    /** Texts longer than the encoder reads (documents' summaries and passages), clipped when embedded. */
    truncated: number;
    /** truncated / (documents + passages). */
    truncatedShare: number;
  };
  close(): Promise<void>;
}

/** Where a cached corpus lives: one folder per data set, ingest settings and models. */
function cacheFolder(dataset: EvalDataset, setup: RunSetup): string | undefined {
  if (!setup.corpusCacheDir) return undefined;
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ documents: dataset.documents, ingest: setup.ingest, encoders: setup.encoders }));
  return path.join(setup.corpusCacheDir, `${dataset.corpus ?? dataset.name}-${hash.digest('hex').slice(0, 16)}`);
}

/**
 * The data set in a PGlite database, indexed for full text and embedded: fresh and in memory, or
 * (with corpusCacheDir) on disk, reused when a finished copy exists.
 */
export async function loadCorpus(dataset: EvalDataset, setup: RunSetup): Promise<Corpus> {
  const folder = cacheFolder(dataset, setup);
  const statsFile = folder && path.join(folder, 'corpus-stats.json');
  const cached = statsFile && existsSync(statsFile) ? (JSON.parse(readFileSync(statsFile, 'utf8')) as Corpus['stats']) : undefined;
  if (folder && !cached) rmSync(folder, { recursive: true, force: true });
  const db = await PgliteDatabase.open(folder ? { dataDir: folder } : {});
  try {
    await migrate(db);
    const encoders = await EncoderSet.load(setup.encoders, { cacheDir: setup.modelCacheDir, threads: setup.encoderThreads });
    const targets = await prepareEmbedding(db, encoders);
    const stats = cached ?? (await ingestAndEmbed(db, dataset, setup, targets));
    if (cached) setup.log(`reusing the corpus in ${folder}`);
    if (statsFile && !cached) writeFileSync(statsFile, JSON.stringify(stats));

    const rows = await db.query<{ id: number; key: string; title_path: string[]; text: string }>(
      'SELECT p.id, d.key, p.title_path, p.text FROM passages p JOIN documents d ON d.id = p.document_id ORDER BY p.id',
    );
    const passages = new Map(rows.map((r) => [r.id, { documentKey: r.key, titlePath: r.title_path, text: r.text }]));
    const docs = await db.query<{ id: number; key: string }>('SELECT id, key FROM documents ORDER BY id');
    return {
      db,
      targets,
      passages,
      documentKeys: new Map(docs.map((d) => [d.id, d.key])),
      stats,
      close: async () => {
        await encoders.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

async function ingestAndEmbed(db: Database, dataset: EvalDataset, setup: RunSetup, targets: EmbeddingTargets): Promise<Corpus['stats']> {
  let lastLogged = 0;
  const summary = await ingest(db, dataset.documents, {
    ...setup.ingest,
    splitFor: async () => targets.encoders.byRole.passage,
    embedWith: async () => targets,
    embedBatchSize: setup.embedBatchSize,
    onEvent: (event) => {
      if (event.stage === 'embed' && (event.done === event.total || event.done - lastLogged >= 2000)) {
        lastLogged = event.done === event.total ? 0 : event.done;
        setup.log(`  embedded ${event.done}/${event.total} ${event.level}`);
      }
    },
  });
  for (const o of summary.outcomes.filter((o) => o.status === 'failed')) setup.log(`  ingest failed: ${o.message}`);
  const ingestSeconds = summary.seconds.write + summary.seconds.index;
  const embedSeconds = summary.seconds.embed;
  const truncated = summary.embedded?.truncated ?? 0;
  setup.log(`ingested ${summary.created} documents (${summary.failed} failed), ${summary.passages} passages in ${ingestSeconds.toFixed(1)} s`);
  setup.log(`embedded in ${embedSeconds.toFixed(1)} s; ${truncated} texts clipped to the encoder's token budget`);
  const [{ passages, sections }] = await db.query<{ passages: number; sections: number }>(
    'SELECT (SELECT count(*) FROM passages)::int AS passages, (SELECT count(*) FROM sections)::int AS sections',
  );
  const texts = (summary.embedded?.documents ?? 0) + (summary.embedded?.passages ?? 0);
  return {
    documents: summary.created,
    failed: summary.failed,
    passages,
    sections,
    ingestSeconds,
    embedSeconds,
    truncated,
    truncatedShare: texts > 0 ? Math.round((10000 * truncated) / texts) / 10000 : 0,
  };
}

/** One run's parameters: a mode, k1 and k2, and ranking parameters (parameters.ts) given as a question would give them. */
export interface RunParams extends Omit<RankingLayer, 'summaryPieces'> {
  mode: RetrievalMode;
  k1: number;
  k2: number;
  lambda: number;
  /** Several summary vectors (a sweep's params hold it as 1). */
  summaryPieces?: boolean | number;
  bm25?: Partial<Bm25Settings>;
  /** false: search as the API does (HNSW, the BM25 index, stage 2 by candidates); unset: exact. */
  exact?: boolean;
}

/** A passage lies in a gold section when its title path (below the document title) starts with the section's path. */
function inSection(p: PassageInfo, gold: EvalQuestion['goldSections']): boolean {
  return gold.some((g) => g.document === p.documentKey && g.path.every((t, i) => p.titlePath[i + 1] === t));
}

/** A run's parameters as `retrieve`'s arguments (exact search) and options; shared with the highlight measurement. */
export function retrieveParts(params: RunParams): {
  args: Omit<RunParams, 'bm25' | 'summaryPieces' | 'exact'> & { summaryPieces?: boolean };
  options: RetrieveOptions;
} {
  const { bm25, summaryPieces, exact = true, ...args } = params;
  return { args: { ...args, ...(summaryPieces === undefined ? {} : { summaryPieces: Boolean(summaryPieces) }) }, options: { exact, bm25 } };
}

/** Every question through `retrieve` with the given parameters, one at a time (latency is per call). */
export async function runQuestions(corpus: Corpus, questions: readonly EvalQuestion[], params: RunParams): Promise<QuestionOutcome[]> {
  const outcomes: QuestionOutcome[] = [];
  for (const q of questions) {
    const started = process.hrtime.bigint();
    const { args, options } = retrieveParts(params);
    const result = await retrieve(corpus.db, corpus.targets, { question: q.question, ...args }, options);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const gold = new Set(q.goldDocuments);
    const stage = MODES[params.mode];
    const stageKeys = result.documents.map((d) => corpus.documentKeys.get(d.documentId)!);
    const stageRank = stage.documentStage ? firstHitRank(stageKeys, (k) => gold.has(k)) : undefined;
    if (stage.documentsOnly) {
      outcomes.push({
        id: q.id,
        docRank: stageRank ?? null,
        stageRank,
        ms,
        top: stageKeys.slice(0, 3).map((k) => ({ documentKey: k, titlePath: [], text: '' })),
        hits: {},
      });
      continue;
    }
    const passages = result.passages.map((p) => corpus.passages.get(p.passageId)!);
    const outcome: QuestionOutcome = {
      id: q.id,
      docRank: firstHitRank(passages, (p) => gold.has(p.documentKey)),
      ...(stageRank !== undefined ? { stageRank } : {}),
      ms,
      top: passages.slice(0, 3),
      hits: {},
    };
    if (q.goldSections.length > 0) outcome.sectionRank = firstHitRank(passages, (p) => inSection(p, q.goldSections));
    if (q.answers) outcome.answerRank = firstHitRank(passages, (p) => hasAnswer(p.text, q.answers!));
    const at = (rank: number | null | undefined) => (rank ? passages[rank - 1] : undefined);
    for (const [kind, rank] of [
      ['document', outcome.docRank],
      ['section', outcome.sectionRank],
      ['answer', outcome.answerRank],
    ] as const) {
      const hit = at(rank);
      if (hit) outcome.hits[kind] = hit;
    }
    outcomes.push(outcome);
  }
  return outcomes;
}
