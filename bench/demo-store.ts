/**
 * npm run bench:demo-store — the default mode on the store a new user first has: the Factbook demo
 * on the embedded database (PGlite), 261 documents of 162 passages on average, the real USE-lite
 * encoder, through retrieve() as the API calls it (HNSW and bounded postings, not the exact forms).
 * On such a corpus of few long documents, k1 = 100 documents are 38 % of the passages, so stage 2's
 * cost is what a passage budget bounds. Variants, in a shuffled order per question:
 * HIERARCHICAL; the default mode with the store's own settings, as the API answers (the demo loader
 * stores the Factbook's passage budget); the default with `passageBudget: null` (every passage of
 * the k1 documents, the baseline); and the default at BENCH_BUDGETS. Ratios are p50 against
 * HIERARCHICAL's and against the baseline's in the same run; overlap@20 is the share of the
 * baseline's top 20 passages a variant also returns.
 *
 * The store: BENCH_DATA_DIR, a PGlite data folder made by `DATA_DIR=<dir> dhr serve --demo` (stop the
 * server first: one process holds a PGlite folder). The bench only reads.
 *   BENCH_QUESTIONS (150: distinct Factbook-style questions)  BENCH_WARMUP (5)  BENCH_BUDGETS (1000,2000,8000)
 *   BENCH_DECAY=d (the store's settings with perDocumentDecay d too, e.g. 0: what the default's decay costs)
 *   BENCH_WITH='{"titleLink":0}' (the store's settings with these ranking parameters too, a JSON object: what they cost)
 *   BENCH_CONTEXT=t (then also: what Retrieval.context adds for k2 = 20 within t tokens, each expand form,
 *   against the same retrieve alone: the whole call's wall time, p50 ratio in the same run, shuffled order)
 */
import 'reflect-metadata';
import { shuffle } from '../src/adapters/random';
import { loadEmbedding } from '../src/cli/embed';
import { loadConfig } from '../src/config';
import { percentile } from '../src/eval/metrics';
import { assembleContext, contextTokenizer, type ContextOptions } from '../src/pipeline/context';
import type { RetrievalMode } from '../src/retrieval/modes';
import { retrieve } from '../src/retrieval/retrieve';
import { corpusSettingsOf } from '../src/retrieval/settings';
import { currentSettings } from '../src/store/retrieval-settings';
import type { RetrieveArgs } from '../src/retrieval/validate';
import type { Database } from '../src/store/db';
import { openMigratedDatabase } from '../src/store/open';
import { prng } from '../test/helpers/prng';

const dataDir = process.env.BENCH_DATA_DIR;
const questionCount = Number(process.env.BENCH_QUESTIONS ?? 150);
const warmup = Number(process.env.BENCH_WARMUP ?? 5);
const budgets = (process.env.BENCH_BUDGETS ?? '1000,2000,8000').split(',').filter(Boolean).map(Number);

const COUNTRIES = [
  'Norway',
  'Kenya',
  'Peru',
  'Japan',
  'Chile',
  'Egypt',
  'Canada',
  'Fiji',
  'Mali',
  'Nepal',
  'Oman',
  'Chad',
  'Cuba',
  'Iran',
  'Iraq',
  'Laos',
  'Togo',
  'Niger',
  'Spain',
  'Italy',
  'France',
  'Brazil',
  'Mexico',
  'India',
  'China',
  'Greece',
  'Sweden',
  'Finland',
  'Poland',
  'Austria',
  'Ghana',
  'Bolivia',
  'Mongolia',
  'Iceland',
  'Portugal',
  'Vietnam',
  'Morocco',
  'Sudan',
  'Yemen',
  'Malta',
];
const FORMS = [
  'What is the capital of %?',
  'What languages are spoken in %?',
  'What is the climate of %?',
  'What are the natural resources of %?',
  'What is the population of %?',
  'Which countries border %?',
  'What are the main exports of %?',
  'What is the currency of %?',
];

interface Variant {
  label: string;
  mode: RetrievalMode;
  args?: Partial<RetrieveArgs>;
}

async function main() {
  if (!dataDir) throw new Error('set BENCH_DATA_DIR to a PGlite data folder made by `DATA_DIR=<dir> dhr serve --demo`');
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' });
  const db = await openMigratedDatabase(config);
  const { models, targets } = await loadEmbedding(db, config);
  try {
    const [{ documents, passages }] = await db.query<{ documents: number; passages: number }>(
      'SELECT (SELECT count(*) FROM documents)::int AS documents, (SELECT count(*) FROM passages)::int AS passages',
    );
    console.log(
      `store: ${dataDir}, ${documents} documents, ${passages} passages (${(passages / documents).toFixed(0)} a document), ${config.databaseUrl ? 'PostgreSQL' : 'PGlite'}`,
    );
    const variants: Variant[] = [
      { label: 'HIERARCHICAL', mode: 'HIERARCHICAL' },
      { label: "default mode, the store's settings (as the API answers)", mode: 'HYBRID_HIERARCHICAL' },
      { label: 'default, passageBudget null (baseline)', mode: 'HYBRID_HIERARCHICAL', args: { passageBudget: null } },
      ...budgets.map((b) => ({ label: `default, passageBudget ${b}`, mode: 'HYBRID_HIERARCHICAL' as const, args: { passageBudget: b } })),
      ...(process.env.BENCH_WITH
        ? [
            {
              label: `default, the store's settings and ${process.env.BENCH_WITH}`,
              mode: 'HYBRID_HIERARCHICAL' as const,
              args: JSON.parse(process.env.BENCH_WITH) as Partial<RetrieveArgs>,
            },
          ]
        : []),
      ...(process.env.BENCH_DECAY
        ? [
            {
              label: `default, the store's settings, perDocumentDecay ${process.env.BENCH_DECAY}`,
              mode: 'HYBRID_HIERARCHICAL' as const,
              args: { perDocumentDecay: Number(process.env.BENCH_DECAY) },
            },
          ]
        : []),
    ];
    const random = prng(20261128);
    const all = COUNTRIES.flatMap((c) => FORMS.map((f) => f.replace('%', c)));
    const questions = shuffle(
      all.map((_, i) => i),
      random,
    ).map((i) => all[i]);
    const asked = questions.slice(0, questionCount);
    const times = variants.map(() => [] as number[]);
    const tops = variants.map(() => [] as number[][]);
    const corpus = corpusSettingsOf(await currentSettings(db));
    console.log(`the store's settings: ${JSON.stringify(corpus)}`);
    const run = (v: Variant, question: string) => retrieve(db, targets, { question, mode: v.mode, k1: 100, k2: 20, ...v.args }, { corpus });
    for (const question of questions.slice(questionCount, questionCount + warmup)) for (const v of variants) await run(v, question);
    for (const question of asked) {
      const order = shuffle(
        variants.map((_, i) => i),
        random,
      );
      for (const x of order) {
        const r = await run(variants[x], question);
        // the statement alone (the question's encoding is the same for every variant)
        times[x].push(r.timings.searchMs);
        tops[x].push(r.passages.map((p) => p.passageId));
      }
    }
    const p50 = (x: number) => percentile(times[x], 50);
    const baseline = variants.findIndex((v) => v.args?.passageBudget === null);
    const overlap = (x: number) => {
      let shared = 0;
      let all = 0;
      tops[x].forEach((top, q) => {
        const base = new Set(tops[baseline][q]);
        shared += top.filter((id) => base.has(id)).length;
        all += base.size;
      });
      return shared / all;
    };
    console.log(`\n${asked.length} questions, k1 100, k2 20; the search statement's ms (retrieve's timings.searchMs)\n`);
    console.log('| variant | p50 ms | p95 ms | p50 / HIERARCHICAL | p50 / baseline | overlap@20 with baseline |');
    console.log('|---|---:|---:|---:|---:|---:|');
    variants.forEach((v, x) =>
      console.log(
        `| ${v.label} | ${p50(x).toFixed(2)} | ${percentile(times[x], 95).toFixed(2)} | ${(p50(x) / p50(0)).toFixed(2)}× | ${(p50(x) / p50(baseline)).toFixed(2)}× | ${overlap(x).toFixed(3)} |`,
      ),
    );
    if (process.env.BENCH_CONTEXT) await contextCost(db, targets, Number(process.env.BENCH_CONTEXT), asked, (question) => run(variants[1], question));
  } finally {
    await models.close();
    await db.close();
  }
}

/**
 * retrieve alone against retrieve then assembleContext on its 20 passages (as Retrieval.context
 * runs: one read of the hits' sections, the active passage encoder's tokenizer), per question in
 * shuffled order; the figure is the whole call's wall time.
 */
async function contextCost(
  db: Database,
  targets: Awaited<ReturnType<typeof loadEmbedding>>['targets'],
  tokens: number,
  asked: string[],
  ask: (q: string) => ReturnType<typeof retrieve>,
) {
  const tokenizer = contextTokenizer(targets?.encoders.byRole.passage);
  const forms: { label: string; options?: ContextOptions }[] = [
    { label: 'retrieve alone (baseline)' },
    { label: `+ context ${tokens} tokens, expand NONE`, options: { tokens } },
    { label: `+ context ${tokens} tokens, expand WINDOW 1`, options: { tokens, expand: 'WINDOW', window: 1 } },
    { label: `+ context ${tokens} tokens, expand SECTION`, options: { tokens, expand: 'SECTION' } },
  ];
  const random = prng(53);
  const times = forms.map(() => [] as number[]);
  const extra = forms.map(() => [] as number[]);
  const blocks = forms.map(() => [] as number[]);
  for (const question of asked) {
    for (const x of shuffle(
      forms.map((_, i) => i),
      random,
    )) {
      const started = process.hrtime.bigint();
      const r = await ask(question);
      const retrieved = process.hrtime.bigint();
      const options = forms[x].options;
      if (options) {
        const c = await assembleContext(
          db,
          r.passages.map((p) => ({ passageId: p.passageId, documentId: p.documentId, score: p.score })),
          options,
          tokenizer,
        );
        blocks[x].push(c.blocks.length);
      }
      const done = process.hrtime.bigint();
      times[x].push(Number(done - started) / 1e6);
      extra[x].push(Number(done - retrieved) / 1e6);
    }
  }
  const p50 = (x: number) => percentile(times[x], 50);
  console.log(`\ncontext for k2 20 (the default mode, the store's settings), tokenizer ${tokenizer.name}; the whole call's wall ms\n`);
  // The step's own p50 against retrieve's is steadier on a busy machine than the ratio of two wall p50s.
  console.log('| variant | p50 ms | p95 ms | p50 / baseline | the context step alone, p50 ms | step p50 / baseline p50 | blocks, mean |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  forms.forEach((f, x) => {
    const step = percentile(extra[x], 50);
    console.log(
      `| ${f.label} | ${p50(x).toFixed(2)} | ${percentile(times[x], 95).toFixed(2)} | ${(p50(x) / p50(0)).toFixed(2)}× | ${x === 0 ? '–' : step.toFixed(2)} | ${
        x === 0 ? '–' : `${((100 * step) / p50(0)).toFixed(1)} %`
      } | ${x === 0 ? '–' : (blocks[x].reduce((a, b) => a + b, 0) / blocks[x].length).toFixed(1)} |`,
    );
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
