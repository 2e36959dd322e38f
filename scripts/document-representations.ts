/**
 * Which dense document representation finds the gold document? Measured here, brute
 * force over an evaluation corpus (the one `dhr eval --reuse-corpus` cached), for every question:
 *
 *   summary        the stored document vector (DHR's summary, clipped to the encoder's budget)
 *   summaries      several summary vectors: the stored one and the summary's pieces that fit the
 *                  budget (src/pipeline/summary-pieces.ts), max-sim over them
 *   best passage   the best cosine among all the document's passages
 *   top-3 mean     the mean of its 3 best
 *   centroid       cosine with the mean of its passage vectors
 *
 * Dense only (no BM25): the product fuses the chosen signal with document BM25, and its own sweep
 * of that fusion is in the eval report. Dev and test are printed apart; choices are read on dev.
 *
 *   npx tsx scripts/document-representations.ts pydocs|factbook
 */
import * as path from 'node:path';
import { corpusSetup } from '../src/cli/eval';
import { loadConfig } from '../src/config';
import { DATASETS } from '../src/eval';
import { loadCorpus } from '../src/eval/run';
import { splitOf, type Split } from '../src/eval/split';
import { packageRoot } from '../src/paths';
import { summaryPieces } from '../src/pipeline/summary-pieces';

const parse = (text: string) => Float32Array.from(text.slice(1, -1).split(','), Number);
const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const unit = (v: Float32Array) => {
  const n = Math.sqrt(dot(v, v)) || 1;
  return v.map((x) => x / n);
};

async function main() {
  const name = process.argv[2] ?? 'pydocs';
  const root = packageRoot();
  const dataset = DATASETS[name](path.join(root, '.cache', 'datasets'));
  const corpus = await loadCorpus(dataset, { ...corpusSetup(loadConfig()), corpusCacheDir: path.join(root, '.cache', 'eval-corpus') });
  try {
    const { db, targets } = corpus;
    const encoders = targets.encoders.byRole;
    const docModel = targets.document;
    const passageModel = targets.passage;
    const docs = await db.query<{ id: number; key: string; title: string; summary: string; embedding: string }>(
      `SELECT d.id, d.key, d.title, d.summary, e.embedding::text AS embedding
         FROM documents d JOIN document_embeddings e ON e.document_id = d.id AND e.model_id = $1 ORDER BY d.id`,
      [docModel.id],
    );
    const passageRows = await db.query<{ document_id: number; embedding: string }>(
      'SELECT document_id, embedding::text AS embedding FROM passage_embeddings WHERE model_id = $1 ORDER BY passage_id',
      [passageModel.id],
    );
    const passagesOf = new Map<number, Float32Array[]>();
    for (const r of passageRows) {
      const list = passagesOf.get(r.document_id) ?? [];
      list.push(parse(r.embedding));
      passagesOf.set(r.document_id, list);
    }
    const started = Date.now();
    const pieces = docs.map((d) => summaryPieces(encoders.document, d.title, d.summary));
    const flat = pieces.flat();
    const pieceVectors = (await encoders.document.encode(flat, 'document')).vectors;
    let at = 0;
    const summaryVectors = pieces.map((p) => pieceVectors.slice(at, (at += p.length)));
    console.error(
      `${docs.length} documents: ${flat.length} summary pieces (${docs.filter((_, i) => pieces[i].length > 0).length} summaries split), encoded in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const centroids = docs.map((d) => {
      const list = passagesOf.get(d.id) ?? [];
      const sum = new Float32Array(docs.length ? parse(docs[0].embedding).length : 0);
      for (const v of list) for (let i = 0; i < v.length; i++) sum[i] += v[i];
      return unit(sum);
    });

    const questions = dataset.questions;
    const qDoc = (
      await encoders.questionDocument.encode(
        questions.map((q) => q.question),
        'questionDocument',
      )
    ).vectors;
    const qPas = (
      await encoders.questionPassage.encode(
        questions.map((q) => q.question),
        'questionPassage',
      )
    ).vectors;
    const docVectors = docs.map((d) => parse(d.embedding));
    type Scorer = (qi: number, di: number) => number;
    const scorers: Record<string, Scorer> = {
      summary: (qi, di) => dot(qDoc[qi], docVectors[di]),
      summaries: (qi, di) => Math.max(dot(qDoc[qi], docVectors[di]), ...summaryVectors[di].map((v) => dot(qDoc[qi], v))),
      'best passage': (qi, di) => Math.max(-1, ...(passagesOf.get(docs[di].id) ?? []).map((v) => dot(qPas[qi], v))),
      'top-3 mean': (qi, di) => {
        const s = (passagesOf.get(docs[di].id) ?? [])
          .map((v) => dot(qPas[qi], v))
          .sort((a, b) => b - a)
          .slice(0, 3);
        return s.length ? s.reduce((a, b) => a + b, 0) / s.length : -1;
      },
      centroid: (qi, di) => dot(qPas[qi], centroids[di]),
    };
    const ks = [1, 5, 20, 100];
    console.log(`${dataset.name}: gold document's rank by dense document representation (brute force; ${docs.length} documents)\n`);
    for (const split of ['dev', 'test'] as Split[]) {
      const idx = questions.map((q, i) => (splitOf(q.id) === split ? i : -1)).filter((i) => i >= 0);
      console.log(`${split} (${idx.length} questions)\n\n| representation | @1 | @5 | @20 | @100 | MRR@100 |\n| --- | ---: | ---: | ---: | ---: | ---: |`);
      for (const [label, score] of Object.entries(scorers)) {
        const hits = ks.map(() => 0);
        let mrr = 0;
        for (const qi of idx) {
          const gold = new Set(questions[qi].goldDocuments);
          const ranked = docs.map((d, di) => ({ key: d.key, s: score(qi, di) })).sort((a, b) => b.s - a.s || a.key.localeCompare(b.key));
          const rank = ranked.findIndex((r) => gold.has(r.key)) + 1;
          ks.forEach((k, j) => (hits[j] += rank > 0 && rank <= k ? 1 : 0));
          if (rank > 0 && rank <= 100) mrr += 1 / rank;
        }
        console.log(`| ${label} | ${hits.map((h) => ((100 * h) / idx.length).toFixed(1)).join(' | ')} | ${(mrr / idx.length).toFixed(3)} |`);
      }
      console.log('');
    }
  } finally {
    await corpus.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
