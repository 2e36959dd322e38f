/**
 * Runs a data set end to end through the product's own code paths: a fresh embedded database,
 * the ingest pipeline (write, full-text index, embed), then every question through `retrieve`.
 * Searches are exact (no HNSW), so the same data and model give the same rankings every run.
 */
import { EncoderSet } from '../encoders/set';
import type { EncoderSpec } from '../encoders/spec';
import type { IngestOptions } from '../ingest/types';
import { retrieve } from '../retrieval/retrieve';
import type { RetrievalMode } from '../retrieval/types';
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
}

export interface Corpus {
  db: Database;
  targets: EmbeddingTargets;
  passages: Map<number, PassageInfo>;
  documentKeys: Map<number, string>;
  stats: { documents: number; failed: number; passages: number; sections: number; ingestSeconds: number; embedSeconds: number };
  close(): Promise<void>;
}

/** A fresh in-memory PGlite holding the data set, indexed for full text and embedded. */
export async function loadCorpus(dataset: EvalDataset, setup: RunSetup): Promise<Corpus> {
  const db = await PgliteDatabase.open();
  try {
    await migrate(db);
    const encoders = await EncoderSet.load(setup.encoders, { cacheDir: setup.modelCacheDir, threads: setup.encoderThreads });
    let targets: EmbeddingTargets;
    try {
      targets = await prepareEmbedding(db, encoders);
    } catch (error) {
      await encoders.close();
      throw error;
    }
    let lastLogged = 0;
    const summary = await ingest(db, dataset.documents, {
      ...setup.ingest,
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
    setup.log(`ingested ${summary.created} documents (${summary.failed} failed), ${summary.passages} passages in ${ingestSeconds.toFixed(1)} s`);
    setup.log(`embedded in ${embedSeconds.toFixed(1)} s`);

    const rows = await db.query<{ id: number; key: string; title_path: string[]; text: string }>(
      'SELECT p.id, d.key, p.title_path, p.text FROM passages p JOIN documents d ON d.id = p.document_id ORDER BY p.id',
    );
    const passages = new Map(rows.map((r) => [r.id, { documentKey: r.key, titlePath: r.title_path, text: r.text }]));
    const docs = await db.query<{ id: number; key: string }>('SELECT id, key FROM documents ORDER BY id');
    const [{ n: sections }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM sections');
    return {
      db,
      targets,
      passages,
      documentKeys: new Map(docs.map((d) => [d.id, d.key])),
      stats: { documents: summary.created, failed: summary.failed, passages: rows.length, sections, ingestSeconds, embedSeconds },
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

export interface RunParams {
  mode: RetrievalMode;
  k1: number;
  k2: number;
  lambda: number;
}

/** A passage lies in a gold section when its title path (below the document title) starts with the section's path. */
function inSection(p: PassageInfo, gold: EvalQuestion['goldSections']): boolean {
  return gold.some((g) => g.document === p.documentKey && g.path.every((t, i) => p.titlePath[i + 1] === t));
}

/** Every question through `retrieve` with the given parameters, one at a time (latency is per call). */
export async function runQuestions(corpus: Corpus, questions: readonly EvalQuestion[], params: RunParams): Promise<QuestionOutcome[]> {
  const outcomes: QuestionOutcome[] = [];
  for (const q of questions) {
    const started = process.hrtime.bigint();
    const result = await retrieve(corpus.db, corpus.targets, { question: q.question, ...params }, { exact: true });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const gold = new Set(q.goldDocuments);
    if (params.mode === 'DOCUMENTS') {
      const keys = result.documents.map((d) => corpus.documentKeys.get(d.documentId)!);
      outcomes.push({
        id: q.id,
        docRank: firstHitRank(keys, (k) => gold.has(k)),
        ms,
        top: keys.slice(0, 3).map((k) => ({ documentKey: k, titlePath: [], text: '' })),
        hits: {},
      });
      continue;
    }
    const passages = result.passages.map((p) => corpus.passages.get(p.passageId)!);
    const outcome: QuestionOutcome = {
      id: q.id,
      docRank: firstHitRank(passages, (p) => gold.has(p.documentKey)),
      ms,
      top: passages.slice(0, 3),
      hits: {},
    };
    if (q.goldSections.length > 0) outcome.sectionRank = firstHitRank(passages, (p) => inSection(p, q.goldSections));
    if (q.answers) outcome.answerRank = firstHitRank(passages, (p) => hasAnswer(p.text, q.answers!));
    const at = (rank: number | null | undefined) => (rank ? passages[rank - 1] : undefined);
    for (const [kind, rank] of [['document', outcome.docRank], ['section', outcome.sectionRank], ['answer', outcome.answerRank]] as const) {
      const hit = at(rank);
      if (hit) outcome.hits[kind] = hit;
    }
    outcomes.push(outcome);
  }
  return outcomes;
}
