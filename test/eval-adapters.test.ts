import type { TrainingPair } from '../src/adapters/pair';
import { readFactbook } from '../src/ingest/factbook';
import type { DocumentInput } from '../src/ingest/types';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ADAPTER_MODES, ADAPTER_RUNS, MINED_KINDS, evaluateAdapters, type AdapterEvaluation, type TrainedRun } from '../src/eval/adapters';
import { adapterSection } from '../src/eval/adapters-report';
import { labelPairs } from '../src/eval/label-pairs';
import { loadCorpus, runQuestions, type Corpus, type RunParams } from '../src/eval/run';
import { scoreOutcomes, type Scores } from '../src/eval/scores';
import { splitOf } from '../src/eval/split';
import type { EvalDataset, EvalQuestion } from '../src/eval/types';
import { modeDefaults, type RetrievalMode } from '../src/retrieval/modes';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EvalOutcome } from '../src/eval/evaluate';
import { reusableSweeps } from '../src/eval/index';
import { sampleMinedPairs } from '../src/eval/mined-pairs';
import { buildReport } from '../src/eval/report';
import { evaluateQuestionEncoder, questionEncoderSection } from '../src/eval/question-encoder';
import { EncoderSet, loadEncoder } from '../src/encoders/set';
import { writeTinyModel } from './helpers/tiny-model';

/**
 * The eval's adapter runs on four real Factbook profiles with USE-lite: mined and dev-label
 * adapters trained, every mode × adapter scored on the test split, "none" the plain run's scores,
 * no test question among the training pairs, the report section rendered, the same under the seed.
 */
const documents = readFactbook({ regions: ['europe'], limit: 4 });

/** "What is the <subsection> of <country>?", answered by the subsection's first words. */
function questionsOf(d: DocumentInput): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  for (const section of d.sections ?? []) {
    for (const sub of section.sections ?? []) {
      const words = (sub.text ?? '').split(/\s+/).filter((w) => /^[A-Za-z]{3,}$/.test(w));
      if (words.length < 3 || out.length >= 16) continue;
      out.push({
        id: `${d.key}/${section.title}/${sub.title}`,
        question: `What is the ${sub.title.toLowerCase()} of ${d.title}?`,
        answers: [words.slice(0, 2).join(' ')],
        goldDocuments: [d.key!],
        goldSections: [{ document: d.key!, path: [section.title, sub.title] }],
      });
    }
  }
  return out;
}

// Every dev question (the labels adapter needs ≥ 20 pairs) and a few test questions (each is 16 retrievals).
const all = documents.flatMap(questionsOf);
const questions = [...all.filter((q) => splitOf(q.id) === 'dev'), ...all.filter((q) => splitOf(q.id) === 'test').slice(0, 10)];
const dataset: EvalDataset = { name: 'tiny', description: 'four Factbook profiles', documents, questions, stats: {}, notes: [] };
const test = dataset.questions.filter((q) => splitOf(q.id) === 'test');

/** The modes' parameters as the evaluation would pass them (its defaults; k small for speed). */
const modeParams: Partial<Record<RetrievalMode, Omit<RunParams, 'mode'>>> = Object.fromEntries(
  ADAPTER_MODES.map((mode) => {
    const d = modeDefaults(mode);
    return [mode, { k1: 10, k2: 20, ...d }];
  }),
);

const ranksOnly = (s: Scores) => ({ ...s, latencyMs: undefined });

describe('eval adapter runs', () => {
  let corpus: Corpus;
  let result: AdapterEvaluation;
  const pairs: Partial<Record<TrainedRun, readonly TrainingPair[]>> = {};

  beforeAll(async () => {
    corpus = await loadCorpus(dataset, {
      encoders: { questionDocument: 'use-lite', document: 'use-lite', questionPassage: 'use-lite', passage: 'use-lite' },
      encoderThreads: 0,
      ingest: DEFAULT_INGEST_OPTIONS,
      embedBatchSize: 64,
      log: () => undefined,
    });
    result = await evaluateAdapters(
      dataset,
      corpus,
      { target: 'answer', modeParams },
      {
        minedPerKind: 60,
        log: () => undefined,
        onPairs: (run, p) => {
          pairs[run] = p;
        },
      },
    );
  }, 120_000);
  afterAll(() => corpus?.close());

  it('trains all three adapters and scores every mode × adapter', () => {
    expect(dataset.questions.length - test.length).toBeGreaterThanOrEqual(20);
    for (const run of ['mined', 'labels', 'both'] as const) expect(result.training[run]?.notTrained).toBeUndefined();
    expect(result.modes).toEqual(expect.arrayContaining(['HIERARCHICAL', 'FLAT', 'HYBRID', 'HYBRID_HIERARCHICAL']));
    for (const mode of result.modes) {
      expect(Object.keys(result.scores[mode]!).sort()).toEqual([...ADAPTER_RUNS].sort());
      for (const run of ADAPTER_RUNS) expect(result.scores[mode]![run]!.questions).toBe(test.length);
    }
    expect(result.training.both!.pairs).toBe(result.training.mined!.pairs + result.training.labels!.pairs);
    expect(result.training.labels!.kinds).toEqual({ 'dev-label': result.training.labels!.pairs });
  });

  it('"none" is the plain evaluation of the same mode, rank for rank', async () => {
    for (const mode of result.modes) {
      const plain = scoreOutcomes(await runQuestions(corpus, test, { mode, ...modeParams[mode]! }));
      expect(ranksOnly(result.scores[mode]!.none!)).toEqual(ranksOnly(plain));
    }
  });

  it('never trains on a test question', () => {
    const testTexts = new Set(test.map((q) => q.question));
    for (const run of ['labels', 'both'] as const) {
      expect(pairs[run]!.length).toBeGreaterThan(0);
      expect(pairs[run]!.filter((p) => testTexts.has(p.question))).toEqual([]);
    }
    expect(pairs.labels!.every((p) => dataset.questions.some((q) => q.question === p.question && splitOf(q.id) === 'dev'))).toBe(true);
    expect(pairs.mined!.every((p) => p.kind !== 'feedback')).toBe(true);
  });

  it('builds label pairs whose positive holds the answer and whose negatives do not', () => {
    const byText = new Map(dataset.questions.map((q) => [q.question, q]));
    for (const p of pairs.labels!) {
      const q = byText.get(p.question)!;
      expect(corpus.documentKeys.get(p.positive.documentId)).toBe(q.goldDocuments[0]);
      expect(corpus.documentKeys.get(p.positiveDocument.documentId)).toBe(q.goldDocuments[0]);
      for (const n of p.negatives.bm25) expect(corpus.documentKeys.get(n.documentId)).not.toBe(q.goldDocuments[0]);
      for (const n of p.negatives.documents) expect(corpus.documentKeys.get(n.documentId)).not.toBe(q.goldDocuments[0]);
    }
    expect(result.training.labels!.positives!.answerString + result.training.labels!.positives!.denseTop).toBe(pairs.labels!.length);
  });

  it('renders the report section with a row per mode and a sentence per goal', () => {
    const md = adapterSection(result);
    expect(md).toContain('## Query-side adapter (test split)');
    for (const mode of result.modes) expect(md).toContain(`| ${mode === 'HYBRID_HIERARCHICAL' ? '**HYBRID_HIERARCHICAL** (default)' : mode} |`);
    expect(md).toMatch(/Goal: mined pairs add ≥ 3 points answer Top-20 to HYBRID_HIERARCHICAL — \*\*(met|missed)/);
    expect(md).toMatch(/Goal: labels pairs add ≥ 8 points answer Top-20 to HYBRID_HIERARCHICAL — \*\*(met|missed)/);
    expect(md).toContain('Training records:');
  });

  it('builds the same pairs under the same seed', async () => {
    const dev = dataset.questions.filter((q) => splitOf(q.id) === 'dev');
    expect((await labelPairs(corpus, dev, 1)).pairs).toEqual(pairs.labels);
    const mined = await sampleMinedPairs(corpus.db, MINED_KINDS, { perKind: 60, scanPerKind: 1200, seed: 1 });
    expect(mined.pairs).toEqual(pairs.mined);
    expect(mined.scanned).toEqual(result.training.mined!.scanned);
  });

  it('keeps sweeps reusable between runs with and without --adapters', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-eval-adapters-'));
    try {
      const settings = { k1: 10, k2: 20, k1Sweep: [10] };
      const outcome = { lambdaSweep: [], sweeps: [] } as unknown as EvalOutcome;
      const plain = buildReport(dataset, corpus, outcome, settings, 1);
      const withAdapters = { ...buildReport(dataset, corpus, outcome, settings, 2), adapters: result };
      for (const [earlier, now] of [
        [plain, withAdapters],
        [withAdapters, plain],
      ]) {
        writeFileSync(join(dir, 'earlier.json'), JSON.stringify(earlier));
        expect(reusableSweeps(join(dir, 'earlier.json'), now)).toEqual({ lambdaSweep: [], sweeps: [] });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('a fine-tuned question encoder (--question-encoder)', () => {
    let root: string;
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'dhr-eval-qenc-'));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("answers with the folder's question vectors against the stored passage vectors, beside the plain run", async () => {
      // A real custom-model folder of USE-lite's width, so it can stand in for the question side.
      const folder = await writeTinyModel(root, 'tiny-question', { hidden: 512, seed: 3 });
      const modes = Object.fromEntries(
        await Promise.all(ADAPTER_MODES.map(async (m) => [m, scoreOutcomes(await runQuestions(corpus, test, { mode: m, ...modeParams[m]! }))])),
      );
      const e = await evaluateQuestionEncoder(dataset, corpus, { target: 'answer', modeParams, modes }, folder, {
        roles: ['questionPassage'],
        log: () => undefined,
      });
      expect(e.model).toBe('tiny-question');
      expect(Object.keys(e.scores).sort()).toEqual([...ADAPTER_MODES].sort());

      // The same run wired by hand: only questionPassage swapped, the stored vectors and the rest kept.
      const encoder = await loadEncoder(folder);
      try {
        const targets = { ...corpus.targets, encoders: EncoderSet.of({ ...corpus.targets.encoders.byRole, questionPassage: encoder }) };
        const byHand = await runQuestions({ ...corpus, targets }, test, { mode: 'FLAT', ...modeParams.FLAT! });
        expect(ranksOnly(e.scores.FLAT!.tuned)).toEqual(ranksOnly(scoreOutcomes(byHand)));
        const plain = await runQuestions(corpus, test, { mode: 'FLAT', ...modeParams.FLAT! });
        // the question vectors came from the folder: dense rankings change
        expect(byHand.map((o) => o.top)).not.toEqual(plain.map((o) => o.top));
        expect(e.scores.FLAT!.none).toBe(modes.FLAT);
      } finally {
        await encoder.close();
      }
      expect(questionEncoderSection(e)).toContain('| FLAT |');
    }, 120_000);

    it("refuses a folder whose width is not the stored vectors', and runs nothing", async () => {
      const folder = await writeTinyModel(root, 'tiny-narrow', { hidden: 8 });
      const log: string[] = [];
      await expect(
        evaluateQuestionEncoder(dataset, corpus, { target: 'answer', modeParams, modes: {} }, folder, { roles: ['questionPassage'], log: (l) => log.push(l) }),
      ).rejects.toThrow(/dimension 8.*dimension 512/);
      expect(log).toEqual([]);
    });
  });
});
