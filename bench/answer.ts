/**
 * npm run bench:answer — what answer highlights cost, and how often they hold the answer, on a
 * slice of the Factbook (the first BENCH_COUNTRIES profiles, default 40, all regions in order),
 * in a fresh in-memory PGlite with the default encoder.
 *
 * Questions: "What is the capital of <title>?", answer the profile's Government › Capital › name
 * (as test/eval-run.test.ts builds them; the full eval uses the bsdgames quizzes). For each
 * question, the retrieval, then the highlights of its top 5 passages two ways, in the same run and
 * in alternating order:
 *   encoded — every sentence encoded at query time, a fresh sentence cache per question (cold):
 *             the path before sentence vectors were stored, and still the fallback for passages without stored vectors;
 *   stored  — the sentence vectors stored when the passages were embedded, their inner products
 *             with the retrieval's question vector read in one statement (a fresh loader per
 *             question, as per request), the candidate sentences tagged with compromise at query
 *             time (the path before migration 0019, and the fallback for rows without stored spans);
 *   tags    — the same, with the typed spans stored beside the vectors read in that statement.
 * Each path starts with compromise's per-process tag cache empty (every question's passages are
 * new to it in a real stream of questions). The three must give the same highlights (counted).
 * Printed: p50/p95 of each, ratios, and each against the retrieval (the goal: ≤ 5 ms p50 added to
 * a retrieval).
 *
 * Then the cost at ingest: on BENCH_EMBED_SAMPLE (1,000) of the corpus's passages, encoding and
 * writing their vectors as the embed step does, against encoding and writing their sentence
 * vectors (the step's addition) without and with their typed spans, best of BENCH_REPEATS (3) runs
 * each; and the bytes each table takes.
 */
import 'reflect-metadata';
import { cpus, loadavg } from 'node:os';
import { hasAnswer, percentile } from '../src/eval/metrics';
import { loadCorpus, retrieveParts } from '../src/eval/run';
import type { EvalDataset } from '../src/eval/types';
import { readFactbook } from '../src/ingest/factbook';
import { passageEncodingText } from '../src/ingest/summary';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { encodeSentences } from '../src/pipeline/encode';
import type { Answer } from '../src/retrieval/answer';
import { forgetTags } from '../src/retrieval/answer-spans';
import { AnswerHighlighter, storedSentenceLoader } from '../src/retrieval/highlight';
import { DEFAULT_MODE, modeDefaults } from '../src/retrieval/modes';
import { retrieve } from '../src/retrieval/retrieve';
import { SENTENCE_VECTOR_CAP } from '../src/retrieval/sentence-vectors';
import { writePassageEmbeddings } from '../src/store/embeddings';
import { writeSentenceEmbeddings } from '../src/store/sentence-embeddings';

const TOP = 5;
const EMBED_BATCH = 64;
const r1 = (x: number) => Math.round(x * 10) / 10;
const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const same = (a: Answer | null, b: Answer | null) =>
  a === b ||
  (a !== null &&
    b !== null &&
    a.start === b.start &&
    a.end === b.end &&
    a.sentence.start === b.sentence.start &&
    a.spanType === b.spanType &&
    a.answerType === b.answerType &&
    Math.abs(a.score - b.score) < 1e-4);

async function main(): Promise<void> {
  const count = Number(process.env.BENCH_COUNTRIES ?? 40);
  const sample = Number(process.env.BENCH_EMBED_SAMPLE ?? 1000);
  const repeats = Number(process.env.BENCH_REPEATS ?? 3);
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
    embedBatchSize: EMBED_BATCH,
    log: (line) => console.error(line),
  });
  try {
    const { db, targets } = corpus;
    const encoders = { question: targets.encoders.byRole.questionPassage, passage: targets.encoders.byRole.passage };
    const d: { lambda: number; alpha?: number; documentAlpha?: number; summaryShare?: number } = modeDefaults(DEFAULT_MODE);
    const { args, options } = retrieveParts({
      mode: DEFAULT_MODE,
      k1: 100,
      k2: 20,
      lambda: d.lambda,
      alpha: d.alpha,
      documentAlpha: d.documentAlpha,
      summaryShare: d.summaryShare,
    });
    const retrieveMs: number[] = [];
    const encodedMs: number[] = [];
    const storedMs: number[] = [];
    const taggedMs: number[] = [];
    let top1Contains = 0;
    let spanContains = 0;
    let sentenceContains = 0;
    let differ = 0;
    let differTags = 0;
    const questions = dataset.questions;
    for (const [n, q] of questions.entries()) {
      let t = process.hrtime.bigint();
      const result = await retrieve(db, targets, { question: q.question, ...args, k2: Math.max(args.k2, TOP) }, options);
      retrieveMs.push(since(t));
      const top = result.passages.slice(0, TOP).map((p) => ({ ...p, text: corpus.passages.get(p.passageId)!.text }));
      if (top.length === 0) continue;
      const encoded = async () => {
        const cold = new AnswerHighlighter(encoders);
        forgetTags();
        t = process.hrtime.bigint();
        const answers = await Promise.all(top.map((p) => cold.highlight(q.question, p.text, result.questionForPassages)));
        encodedMs.push(since(t));
        return answers;
      };
      const stored = (spans: boolean, ms: number[]) => async () => {
        const highlighter = new AnswerHighlighter(encoders);
        const loader = storedSentenceLoader(db, { spans });
        forgetTags();
        t = process.hrtime.bigint();
        const answers = await Promise.all(
          top.map((p) =>
            highlighter.highlight(q.question, p.text, result.questionForPassages, {
              loader,
              modelId: targets.passage.id,
              passageId: p.passageId,
              documentId: p.documentId,
            }),
          ),
        );
        ms.push(since(t));
        return answers;
      };
      // Rotating which path goes first, so none always meets a warmer process.
      const paths = [encoded, stored(false, storedMs), stored(true, taggedMs)];
      const got: (Answer | null)[][] = [];
      for (let k = 0; k < paths.length; k++) {
        const at = (n + k) % paths.length;
        got[at] = await paths[at]();
      }
      const [a, b, c] = got;
      differ += a.filter((x, i) => !same(x, b[i])).length;
      differTags += b.filter((x, i) => !same(x, c[i])).length;
      if (!hasAnswer(top[0].text, q.answers!)) continue;
      top1Contains++;
      if (b[0] && hasAnswer(b[0].text, q.answers!)) spanContains++;
      if (b[0] && hasAnswer(b[0].sentence.text, q.answers!)) sentenceContains++;
    }
    const p = (xs: number[], k: number) => r1(percentile(xs, k));
    const [lp1, lp5, lp15] = loadavg().map((x) => x.toFixed(1));
    console.log(
      `${cpus().length} CPUs, load average ${lp1} ${lp5} ${lp15}; ${corpus.stats.documents} documents, ${corpus.stats.passages} passages, ${questions.length} questions (${DEFAULT_MODE})`,
    );
    console.log(`top-1 passage holds the answer: ${top1Contains}; highlight holds it: ${spanContains}; its sentence: ${sentenceContains}`);
    console.log(
      `highlights that differ: encoded vs stored vectors ${differ}, stored vectors tagged at query time vs stored tags ${differTags}, of ${encodedMs.length * TOP}`,
    );
    console.log(`highlight top ${TOP}, encoded at query time (cold):          p50 ${p(encodedMs, 50)} ms, p95 ${p(encodedMs, 95)} ms`);
    console.log(`highlight top ${TOP}, stored vectors, tagged at query time: p50 ${p(storedMs, 50)} ms, p95 ${p(storedMs, 95)} ms`);
    console.log(`highlight top ${TOP}, stored vectors and stored tags:       p50 ${p(taggedMs, 50)} ms, p95 ${p(taggedMs, 95)} ms`);
    console.log(
      `ratio p50: stored / encoded ${(percentile(storedMs, 50) / percentile(encodedMs, 50)).toFixed(3)}x; stored tags / stored ${(percentile(taggedMs, 50) / percentile(storedMs, 50)).toFixed(3)}x`,
    );
    const vs = (xs: number[]) => (percentile(xs, 50) / percentile(retrieveMs, 50)).toFixed(3);
    console.log(
      `retrieve: p50 ${p(retrieveMs, 50)} ms, p95 ${p(retrieveMs, 95)} ms; highlights add p50 ${vs(taggedMs)}x the retrieval with stored tags (tagged at query time ${vs(storedMs)}x, encoded ${vs(encodedMs)}x)`,
    );

    // The cost at ingest, on a sample of the corpus's passages (every k-th by id).
    const rows = await db.query<{ id: number; documentId: number; text: string; titlePath: string[] }>(
      `SELECT id, document_id AS "documentId", text, title_path AS "titlePath" FROM (
         SELECT p.*, row_number() OVER (ORDER BY id) AS r, count(*) OVER () AS n FROM passages p) s
       WHERE (r - 1) % greatest(n / $1, 1) = 0 ORDER BY id LIMIT $1`,
      [sample],
    );
    const encoder = targets.encoders.byRole.passage;
    const batches = Array.from({ length: Math.ceil(rows.length / EMBED_BATCH) }, (_, i) => rows.slice(i * EMBED_BATCH, (i + 1) * EMBED_BATCH));
    // Encoding and writing timed apart too (seconds of the last run of each part).
    const split = { passages: { encode: 0, write: 0 }, sentences: { encode: 0, write: 0 }, tagged: { encode: 0, write: 0 } };
    const passagesPart = async () => {
      split.passages = { encode: 0, write: 0 };
      for (const batch of batches) {
        let t0 = performance.now();
        const { vectors } = await encoder.encode(batch.map(passageEncodingText), 'passage');
        split.passages.encode += (performance.now() - t0) / 1000;
        t0 = performance.now();
        await writePassageEmbeddings(
          db,
          targets.passage,
          batch.map((r, i) => ({ passageId: r.id, documentId: r.documentId, vector: vectors[i] })),
          { replace: true },
        );
        split.passages.write += (performance.now() - t0) / 1000;
      }
    };
    let sentences = 0;
    const sentencesPart = (spans: boolean) => async () => {
      sentences = 0;
      const part = (split[spans ? 'tagged' : 'sentences'] = { encode: 0, write: 0 });
      for (const batch of batches) {
        let t0 = performance.now();
        const encoded = await encodeSentences(encoder, batch, { spans });
        part.encode += (performance.now() - t0) / 1000;
        sentences += encoded.reduce((s, e) => s + e.vectors.length, 0);
        t0 = performance.now();
        await writeSentenceEmbeddings(
          db,
          targets.passage,
          batch.map((r, i) => ({ passageId: r.id, documentId: r.documentId, ...encoded[i] })),
        );
        part.write += (performance.now() - t0) / 1000;
      }
    };
    const best = { passages: Infinity, sentences: Infinity, tagged: Infinity };
    const parts: { name: keyof typeof best; run: () => Promise<void> }[] = [
      { name: 'passages', run: passagesPart },
      { name: 'sentences', run: sentencesPart(false) },
      { name: 'tagged', run: sentencesPart(true) },
    ];
    for (let i = 0; i < repeats; i++) {
      for (const { name, run } of i % 2 === 0 ? parts : [...parts].reverse()) {
        const t0 = performance.now();
        await run();
        best[name] = Math.min(best[name], (performance.now() - t0) / 1000);
      }
    }
    console.log(
      `embedding ${rows.length} passages (batches of ${EMBED_BATCH}, encode + write, best of ${repeats}): their vectors ${best.passages.toFixed(2)} s; ` +
        `their ${sentences} sentence vectors (cap ${SENTENCE_VECTOR_CAP} a passage) ${best.sentences.toFixed(2)} s: +${((100 * best.sentences) / best.passages).toFixed(0)}% embedding time for passages; ` +
        `with their typed spans ${best.tagged.toFixed(2)} s: +${((100 * (best.tagged - best.sentences)) / best.passages).toFixed(0)}% more`,
    );
    const f = (x: { encode: number; write: number }) => `encode ${x.encode.toFixed(2)} s, write ${x.write.toFixed(2)} s`;
    console.log(
      `last run of each: passages ${f(split.passages)}; sentences ${f(split.sentences)}; sentences with spans ${f(split.tagged)} (encode includes tagging)`,
    );
    const [size] = await db.query<{ passages: number; sentences: number; n: number; m: number }>(
      `SELECT pg_total_relation_size('passage_embeddings')::float8 AS passages, pg_total_relation_size('sentence_embeddings')::float8 AS sentences,
              (SELECT count(*) FROM passage_embeddings)::int AS n, (SELECT count(*) FROM sentence_embeddings)::int AS m`,
    );
    console.log(
      `storage: passage_embeddings ${(size.passages / 2 ** 20).toFixed(1)} MiB (${size.n} rows), sentence_embeddings ${(size.sentences / 2 ** 20).toFixed(1)} MiB (${size.m} rows): ` +
        `${(size.sentences / size.passages).toFixed(2)}x`,
    );
    console.log(`corpus embedding at load (documents, passages and their sentences): ${corpus.stats.embedSeconds.toFixed(1)} s`);
  } finally {
    await corpus.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
