import { EncoderSet } from '../src/encoders/set';
import { readFactbook } from '../src/ingest/factbook';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { evaluate } from '../src/eval/evaluate';
import { loadCorpus, runQuestions, type Corpus } from '../src/eval/run';
import { measureHighlights } from '../src/eval/highlights';
import { scoreOutcomes } from '../src/eval/scores';
import { sweepTable } from '../src/eval/report';
import type { EvalDataset } from '../src/eval/types';
import { splitOf } from '../src/eval/split';
import { MODES } from '../src/retrieval/modes';

/**
 * The evaluation loop end to end on a few real Factbook profiles: a fresh embedded database,
 * the product's ingest, embedding and retrieve, and ranks that agree with the results they came from.
 */
const documents = readFactbook({ regions: ['europe'], limit: 4 });
const dataset: EvalDataset = {
  name: 'tiny',
  description: 'four Factbook profiles',
  documents,
  questions: documents.map((d) => ({
    id: `capital/${d.key}`,
    question: `What is the capital of ${d.title}?`,
    // The capital's name as the profile gives it (Government › Capital › name).
    answers: [/name: ([^.;]+)/.exec(d.sections!.find((s) => s.title === 'Government')!.sections!.find((s) => s.title === 'Capital')!.text!)![1]],
    goldDocuments: [d.key!],
    goldSections: [{ document: d.key!, path: ['Government', 'Capital'] }],
  })),
  stats: {},
  notes: [],
};

describe('eval run', () => {
  let corpus: Corpus;
  beforeAll(async () => {
    await EncoderSet.load(); // converts the default model once, outside the timed steps
    corpus = await loadCorpus(dataset, {
      encoders: { questionDocument: 'use-lite', document: 'use-lite', questionPassage: 'use-lite', passage: 'use-lite' },
      encoderThreads: 0,
      ingest: DEFAULT_INGEST_OPTIONS,
      embedBatchSize: 64,
      log: () => undefined,
    });
  });
  afterAll(() => corpus?.close());

  it('loads every document and embeds every passage', async () => {
    expect(corpus.stats.documents).toBe(documents.length);
    const [{ n }] = await corpus.db.query<{ n: number }>('SELECT count(*)::int AS n FROM passage_embeddings');
    expect(n).toBe(corpus.stats.passages);
  });

  it.each(['HIERARCHICAL', 'LEXICAL', 'DOCUMENTS'] as const)('ranks agree with the retrieved results (%s)', async (mode) => {
    // k2 = every passage of the corpus, so what must be found follows from the corpus: each question
    // names its own document's title (four distinct ones), so the gold document is among the k1 = 2
    // kept; HIERARCHICAL then returns every passage of it, the gold (Capital) passage included; LEXICAL
    // returns every passage that holds a question word, and the gold passage's title path holds both
    // ("Capital" and the country). The answer was cut from that passage's text.
    const k2 = corpus.stats.passages;
    const outcomes = await runQuestions(corpus, dataset.questions, { mode, k1: 2, k2, lambda: 1 });
    expect(outcomes).toHaveLength(dataset.questions.length);
    expect(outcomes.filter((o) => o.docRank !== null)).toHaveLength(dataset.questions.length);
    outcomes.forEach((o, i) => {
      const q = dataset.questions[i];
      expect(o.id).toBe(q.id);
      if (mode === 'DOCUMENTS') {
        expect(o.answerRank).toBeUndefined();
        expect(o.docRank).toBeLessThanOrEqual(2);
        return;
      }
      expect(o.hits.document!.documentKey).toBe(q.goldDocuments[0]);
      expect(o.sectionRank).toEqual(expect.any(Number));
      expect(o.hits.section!.titlePath).toEqual([documents[i].title, 'Government', 'Capital']);
      // A passage inside the gold section belongs to the gold document: the document hit is no later.
      expect(o.docRank!).toBeLessThanOrEqual(o.sectionRank!);
      expect(o.answerRank).toEqual(expect.any(Number));
      expect(o.answerRank!).toBeLessThanOrEqual(o.sectionRank!);
      expect(o.hits.answer!.text.toLowerCase()).toContain(q.answers![0].toLowerCase().split(' ')[0]);
    });
    const scores = scoreOutcomes(outcomes);
    expect(scores.questions).toBe(dataset.questions.length);
    expect(scores.document.top['1']).toBeLessThanOrEqual(scores.document.top['100']);
  });

  it('gives the same rankings on a second run (exact search)', async () => {
    const params = { mode: 'HIERARCHICAL' as const, k1: 3, k2: 20, lambda: 0.5 };
    const ranks = (os: Awaited<ReturnType<typeof runQuestions>>) => os.map((o) => [o.docRank, o.sectionRank, o.answerRank]);
    expect(ranks(await runQuestions(corpus, dataset.questions, params))).toEqual(ranks(await runQuestions(corpus, dataset.questions, params)));
  });

  it("reuses an earlier run's dev sweeps: the same report without re-running them; a sweep the report lacks is run", async () => {
    const settings = { k1: 3, k2: 20, k1Sweep: [3], log: () => undefined };
    const full = await evaluate(dataset, corpus, settings);
    // The bound per document judged by gold section too (these questions have one), at the same
    // points as the set's own sweep, each the runs a direct call of the same parameters gives.
    const byTarget = full.sweeps.find((w) => w.varied.startsWith('passages per document'))!;
    const bySection = full.sweeps.find((w) => w.varied.startsWith('the bound per document, judged by gold section'))!;
    const dev = dataset.questions.filter((q) => splitOf(q.id) === 'dev');
    expect(bySection.judged).toBe(`section Top-k, over the ${dev.length} questions with a gold section (dev)`);
    expect(bySection.points.map((p) => p.params)).toEqual(byTarget.points.map((p) => p.params));
    for (const p of bySection.points) {
      const direct = scoreOutcomes(
        await runQuestions(corpus, dev, {
          mode: 'HYBRID_HIERARCHICAL',
          k1: 3,
          k2: 20,
          ...MODES.HYBRID_HIERARCHICAL.defaults,
          perDocument: p.params.perDocument as number,
          perDocumentDecay: 0,
        }),
      ).section!;
      expect(p.top).toEqual(direct.top);
    }
    const calls: string[] = [];
    const reused = await evaluate(dataset, corpus, {
      ...settings,
      log: (line) => calls.push(line),
      reuse: { lambdaSweep: full.lambdaSweep, sweeps: full.sweeps },
    });
    const { latencyMs: _a, ...noLatency } = full.modes.LEXICAL!;
    const { latencyMs: _b, ...noLatencyAgain } = reused.modes.LEXICAL!;
    expect(noLatencyAgain).toEqual(noLatency);
    expect(reused.sweeps).toEqual(full.sweeps);
    // A reused sweep is a copy from JSON: its best point is still the one in bold.
    for (const sweep of full.sweeps) {
      const bold = sweepTable(JSON.parse(JSON.stringify(sweep)))
        .split('\n')
        .filter((l) => l.startsWith('| **'));
      expect(bold).toEqual(
        sweepTable(sweep)
          .split('\n')
          .filter((l) => l.startsWith('| **')),
      );
      expect(bold).toHaveLength(sweep.points.filter((p) => JSON.stringify(p.params) === JSON.stringify(sweep.best.params)).length);
      expect(bold.length).toBeGreaterThan(0);
    }
    expect(reused.lambda).toBe(full.lambda);
    // Nothing was swept again (a sweep logs its best point).
    expect(calls.some((l) => /λ coarse|: best \{/.test(l))).toBe(false);
    // A report written before a sweep existed (here: its sweeps renamed) gets that sweep run, and the
    // run says so; the result is the full run's.
    const foreign = full.sweeps.map((w) => ({ ...w, varied: `${w.varied} (other settings)` }));
    const ran: string[] = [];
    const rerun = await evaluate(dataset, corpus, { ...settings, log: (line) => ran.push(line), reuse: { lambdaSweep: full.lambdaSweep, sweeps: foreign } });
    expect(ran.filter((l) => /have no .* sweep of .*: running it/.test(l))).toHaveLength(full.sweeps.length);
    expect(rerun.sweeps.map((w) => w.varied)).toEqual(full.sweeps.map((w) => w.varied));
    expect(rerun.sweeps.map((w) => w.best)).toEqual(full.sweeps.map((w) => w.best));
    // Skipped sweeps are neither run nor reported, and the run says so; the rest are unchanged.
    const skipped: string[] = [];
    const partial = await evaluate(dataset, corpus, {
      ...settings,
      log: (line) => skipped.push(line),
      reuse: { lambdaSweep: full.lambdaSweep, sweeps: foreign },
      skipSweeps: ['top 3, centroid', 'BM25 k1'],
    });
    expect(partial.sweeps.map((w) => w.varied)).toEqual(
      full.sweeps.map((w) => w.varied).filter((v) => !v.includes('top 3, centroid') && !v.includes('BM25 k1')),
    );
    expect(partial.sweeps.length).toBe(full.sweeps.length - 2);
    expect(skipped.filter((l) => /skipped \(--skip-sweep/.test(l))).toHaveLength(2);
    expect(partial.sweeps.map((w) => w.best)).toEqual(full.sweeps.filter((w) => partial.sweeps.some((p) => p.varied === w.varied)).map((w) => w.best));
    // The passage-stage sweep is needed for the test split's dev-best run: refused.
    await expect(
      evaluate(dataset, corpus, { ...settings, reuse: { lambdaSweep: full.lambdaSweep, sweeps: full.sweeps }, skipSweeps: ['alpha, λ'] }),
    ).rejects.toThrow(/cannot be skipped/);
  });

  it('measures answer highlights: the capital is the highlight wherever the top passage has it', async () => {
    const h = await measureHighlights(corpus, dataset.questions, { mode: 'HYBRID_HIERARCHICAL', k1: 100, k2: 20, lambda: 1, alpha: 0.1 });
    expect(h.questions).toBe(dataset.questions.length);
    expect(h.top1Contains).toBeGreaterThan(0);
    // "name: Vienna." — the label's value is the span, and the span is the answer.
    expect(h.spanContains).toBe(h.top1Contains);
    expect(h.sentenceContains).toBe(h.top1Contains);
    expect(h.spanShare).toBe(1);
    expect(h.top1HighlightAccuracy).toBe(h.top1PassageAccuracy);
    expect(h.highlightMs.p50).toBeGreaterThan(0);
  });
});
