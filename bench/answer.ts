/**
 * npm run bench:answer — what answer highlights cost, and how often they hold the answer, on a
 * slice of the Factbook (the first BENCH_COUNTRIES profiles, default 40, all regions in order),
 * in a fresh in-memory PGlite with the default encoder.
 *
 * Questions: "What is the capital of <title>?", answer the profile's Government › Capital › name
 * (as test/eval-run.test.ts builds them; the full eval uses the bsdgames quizzes). Measured with
 * src/eval/highlights.ts: the share of top-1 passages holding the answer whose highlight holds
 * it, and the cost of highlighting the top 5, cold (a fresh cache per question), against the
 * retrieval itself in the same run (the ratio is the figure; the milliseconds depend on the machine).
 */
import 'reflect-metadata';
import { cpus } from 'node:os';
import { measureHighlights } from '../src/eval/highlights';
import { loadCorpus } from '../src/eval/run';
import type { EvalDataset } from '../src/eval/types';
import { readFactbook } from '../src/ingest/factbook';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { DEFAULT_MODE, MODES } from '../src/retrieval/modes';

async function main(): Promise<void> {
  const count = Number(process.env.BENCH_COUNTRIES ?? 40);
  const documents = readFactbook({ limit: count });
  const capitalName = (d: (typeof documents)[number]) =>
    /name: ([^.;]+)/.exec(d.sections?.find((s) => s.title === 'Government')?.sections?.find((s) => s.title === 'Capital')?.text ?? '')?.[1];
  const dataset: EvalDataset = {
    name: 'factbook-slice',
    description: `the first ${count} Factbook profiles`,
    documents,
    questions: documents
      .filter((d) => capitalName(d))
      .map((d) => ({
        id: `capital/${d.key}`,
        question: `What is the capital of ${d.title}?`,
        answers: [capitalName(d)!],
        goldDocuments: [d.key!],
        goldSections: [{ document: d.key!, path: ['Government', 'Capital'] }],
      })),
    stats: {},
    notes: [],
  };
  const use = 'use-lite';
  const corpus = await loadCorpus(dataset, {
    encoders: { questionDocument: use, document: use, questionPassage: use, passage: use },
    encoderThreads: 0,
    ingest: DEFAULT_INGEST_OPTIONS,
    embedBatchSize: 64,
    log: (line) => console.error(line),
  });
  try {
    const d: { lambda: number; alpha?: number; documentAlpha?: number; summaryShare?: number } = MODES[DEFAULT_MODE].defaults;
    const h = await measureHighlights(corpus, dataset.questions, { mode: DEFAULT_MODE, k1: 100, k2: 20, lambda: d.lambda, alpha: d.alpha, documentAlpha: d.documentAlpha, summaryShare: d.summaryShare });
    console.log(`${cpus().length} CPUs, ${corpus.stats.documents} documents, ${corpus.stats.passages} passages, ${h.questions} questions (${DEFAULT_MODE})`);
    console.log(`top-1 passage holds the answer: ${h.top1Contains}; highlight holds it: ${h.spanContains} (${(100 * h.spanShare).toFixed(1)}%); its sentence: ${h.sentenceContains} (${(100 * h.sentenceShare).toFixed(1)}%)`);
    console.log(`Top-1 answer accuracy: passage ${(100 * h.top1PassageAccuracy).toFixed(1)}%, highlight only ${(100 * h.top1HighlightAccuracy).toFixed(1)}%`);
    console.log(`highlight top ${h.passages}, cold: p50 ${h.highlightMs.p50} ms, p95 ${h.highlightMs.p95} ms; retrieve: p50 ${h.retrieveMs.p50} ms, p95 ${h.retrieveMs.p95} ms; ratio p50 ${(h.highlightMs.p50 / h.retrieveMs.p50).toFixed(2)}x`);
  } finally {
    await corpus.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
