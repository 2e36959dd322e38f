/**
 * `dhr eval --dataset prose-highlights`: answer highlights measured on prose. For each
 * question of a split: its gold passage (prose.ts: document + anchor), the default mode's top-1
 * passage, and the highlight of the gold passage by each method — today's untyped choice and the
 * typed one — with the encoder's sentence similarities as the API computes them. Scored: the share
 * whose highlighted span contains the gold span (span level) and whose highlighted sentence does
 * (sentence level), over the questions whose top-1 passage is the gold one (the issue's measure)
 * and over every question on its gold passage (more questions, retrieval left out); per answer type.
 * Plus the Factbook's label-value passages (Government › Capital of the bsdgames quiz countries),
 * highlighted by each method, as a check that typed answers keep label accuracy.
 */
import { RETRIEVE_DEFAULTS } from '../retrieval/defaults';
import { writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import type { Encoder } from '../encoders/types';
import { readFactbook } from '../ingest/factbook';
import { prepareDocument } from '../ingest/prepare';
import { pickAnswer, splitSentences, type Answer, type PickOptions } from '../retrieval/answer';
import { ANSWER_TYPES, classifyQuestion } from '../retrieval/answer-types';
import { DEFAULT_MODE, modeDefaults } from '../retrieval/modes';
import { retrieve } from '../retrieval/retrieve';
import { hasAnswer } from './metrics';
import { buildProse, goldPassage, splitByDocument, type ProseDataset, type ProseQuestion } from './prose';
import { loadCorpus, retrieveParts, type Corpus, type RunSetup } from './run';
import { splitOf, type Split } from './split';
import { buildFactbook } from './factbook';

export interface MethodScores {
  questions: number;
  span: number;
  sentence: number;
  spanShare: number;
  sentenceShare: number;
  /** Mean words in the highlighted span (a whole sentence scores high; the goal is a phrase). */
  meanSpanWords: number;
}

export interface MethodReport {
  /** Questions whose top-1 passage is the gold passage. */
  top1Gold: MethodScores;
  /** Every resolved question, on its gold passage. */
  goldPassage: MethodScores;
  byType: Record<string, MethodScores>;
}

export interface ProseSplitReport {
  split: Split;
  questions: number;
  unresolved: string[];
  top1IsGold: number;
  /** Questions whose classified type differs from the type written in the set. */
  typeMismatches: string[];
  methods: Record<string, MethodReport>;
  failures: Array<{ id: string; question: string; gold: string; today: string; typed: string }>;
}

export interface ProseReport {
  dataset: string;
  command: string;
  corpus: Corpus['stats'];
  splits: ProseSplitReport[];
  factbookLabels?: { questions: number; methods: Record<string, { span: number; sentence: number; spanShare: number; sentenceShare: number }> };
  seconds: number;
}

/** The methods compared: today's untyped choice and the typed one (the API's default). */
export const METHODS: Record<string, PickOptions> = { today: { typed: false }, typed: { typed: true } };

const r4 = (x: number) => Math.round(x * 10000) / 10000;
const wordsOf = (s: string) => (s.match(/\S+/g) ?? []).length;

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** Question–sentence inner products as the API's highlighter computes them (E_Q^ψ(q) · E_P^ψ(sentence)). */
export async function sentenceSimilarities(encoders: { question: Encoder; passage: Encoder }, question: string, text: string): Promise<number[]> {
  const sentences = splitSentences(text).map((s) => s.text);
  if (sentences.length === 0) return [];
  const [q] = (await encoders.question.encode([question], 'questionPassage')).vectors;
  const { vectors } = await encoders.passage.encode(sentences, 'passage', { batchSize: 64 });
  return vectors.map((v) => dot(q, v));
}

class Tally {
  n = 0;
  span = 0;
  sentence = 0;
  words = 0;
  add(answer: Answer | null, gold: string): void {
    this.n++;
    if (!answer) return;
    if (hasAnswer(answer.text, [gold])) this.span++;
    if (hasAnswer(answer.sentence.text, [gold])) this.sentence++;
    this.words += wordsOf(answer.text);
  }
  scores(): MethodScores {
    const share = (x: number) => (this.n > 0 ? r4(x / this.n) : 0);
    return {
      questions: this.n,
      span: this.span,
      sentence: this.sentence,
      spanShare: share(this.span),
      sentenceShare: share(this.sentence),
      meanSpanWords: this.n > 0 ? Math.round((10 * this.words) / this.n) / 10 : 0,
    };
  }
}

export async function evaluateProseSplit(
  dataset: ProseDataset,
  corpus: Corpus,
  split: Split,
  methods: Record<string, PickOptions> = METHODS,
): Promise<ProseSplitReport> {
  const encoders = { question: corpus.targets.encoders.byRole.questionPassage, passage: corpus.targets.encoders.byRole.passage };
  const splits = splitByDocument(dataset.prose.map((q) => q.document));
  const byDocument = new Map<string, Array<{ id: number; text: string }>>();
  for (const [id, p] of corpus.passages) byDocument.set(p.documentKey, [...(byDocument.get(p.documentKey) ?? []), { id, text: p.text }]);
  const params = { mode: DEFAULT_MODE, k1: RETRIEVE_DEFAULTS.k1, k2: 10, ...modeDefaults(DEFAULT_MODE) };
  const tallies = Object.fromEntries(Object.keys(methods).map((m) => [m, { top1: new Tally(), gold: new Tally(), byType: new Map<string, Tally>() }]));
  const report: ProseSplitReport = { split, questions: 0, unresolved: [], top1IsGold: 0, typeMismatches: [], methods: {}, failures: [] };
  for (const q of dataset.prose.filter((x) => splits.get(x.document) === split)) {
    report.questions++;
    const gold = goldPassage(q, byDocument.get(q.document) ?? []);
    if (!gold) {
      report.unresolved.push(q.id);
      continue;
    }
    if (classifyQuestion(q.question) !== q.type) report.typeMismatches.push(`${q.id} (${q.type} → ${classifyQuestion(q.question)})`);
    const { args, options } = retrieveParts(params);
    const result = await retrieve(corpus.db, corpus.targets, { question: q.question, ...args }, options);
    const top1 = result.passages[0]?.passageId === gold.id;
    if (top1) report.top1IsGold++;
    const similarities = await sentenceSimilarities(encoders, q.question, gold.text);
    const answers: Record<string, Answer | null> = {};
    for (const [name, opts] of Object.entries(methods)) {
      const answer = pickAnswer(q.question, gold.text, similarities, opts);
      answers[name] = answer;
      const t = tallies[name];
      t.gold.add(answer, q.span);
      if (top1) t.top1.add(answer, q.span);
      if (!t.byType.has(q.type)) t.byType.set(q.type, new Tally());
      t.byType.get(q.type)!.add(answer, q.span);
    }
    const typed = answers.typed;
    if (typed && !hasAnswer(typed.text, [q.span])) {
      report.failures.push({ id: q.id, question: q.question, gold: q.span, today: answers.today?.text ?? '', typed: typed.text });
    }
  }
  for (const [name, t] of Object.entries(tallies)) {
    const byType: Record<string, MethodScores> = {};
    for (const type of ANSWER_TYPES) if (t.byType.has(type)) byType[type] = t.byType.get(type)!.scores();
    report.methods[name] = { top1Gold: t.top1.scores(), goldPassage: t.gold.scores(), byType };
  }
  return report;
}

/**
 * Factbook label accuracy without the whole Factbook corpus (embedding its 38,877 passages takes
 * most of an hour here): the capital quiz's questions (test split, as `dhr eval --dataset factbook`
 * splits them) highlighted on their gold passage (the Government › Capital passage, split as ingest
 * splits it, that holds the capital), each method with the encoder's sentence similarities. Not
 * measureHighlights' number: that one counts the questions whose top-1 retrieved passage holds the answer.
 */
export async function factbookLabels(
  corpus: Corpus,
  cacheDir: string,
  methods: Record<string, PickOptions> = METHODS,
  split: Split = 'test',
  misses?: string[],
): Promise<ProseReport['factbookLabels']> {
  const encoders = { question: corpus.targets.encoders.byRole.questionPassage, passage: corpus.targets.encoders.byRole.passage };
  const set = buildFactbook(cacheDir);
  const docs = new Map(readFactbook().map((d) => [d.key!, d]));
  const counts = Object.fromEntries(Object.keys(methods).map((m) => [m, { span: 0, sentence: 0 }]));
  let n = 0;
  for (const q of set.questions.filter((x) => splitOf(x.id) === split)) {
    const section = docs
      .get(q.goldDocuments[0])
      ?.sections?.find((s) => s.title === 'Government')
      ?.sections?.find((s) => s.title === 'Capital');
    if (!section?.text) continue;
    // Split as ingest splits it (100 words a passage): the passage that holds the capital, as a top-1 passage would.
    const passages = prepareDocument({ key: q.id, title: 'Capital', sections: [section] }, { maxWords: 100 }).passages;
    const text = passages.find((p) => hasAnswer(p.text, q.answers!))?.text;
    if (!text) continue;
    n++;
    const similarities = await sentenceSimilarities(encoders, q.question, text);
    for (const [name, opts] of Object.entries(methods)) {
      const a = pickAnswer(q.question, text, similarities, opts);
      if (a && hasAnswer(a.text, q.answers!)) counts[name].span++;
      else if (name === 'typed') misses?.push(`${q.id}: «${a?.text.slice(0, 80)}» in «${a?.sentence.text.slice(0, 80)}»`);
      if (a && hasAnswer(a.sentence.text, q.answers!)) counts[name].sentence++;
    }
  }
  const out: NonNullable<ProseReport['factbookLabels']>['methods'] = {};
  for (const [name, c] of Object.entries(counts)) out[name] = { ...c, spanShare: n ? r4(c.span / n) : 0, sentenceShare: n ? r4(c.sentence / n) : 0 };
  return { questions: n, methods: out };
}

const pct = (x: number) => (100 * x).toFixed(1);

function splitMarkdown(s: ProseSplitReport): string {
  const names = Object.keys(s.methods);
  const row = (label: string, pick: (m: MethodReport) => MethodScores | undefined) =>
    `| ${label} | ${names
      .map((n) => {
        const x = pick(s.methods[n]);
        return x
          ? `${x.span}/${x.questions} (${pct(x.spanShare)} %) · ${x.sentence}/${x.questions} (${pct(x.sentenceShare)} %) · ${x.meanSpanWords} words`
          : '–';
      })
      .join(' | ')} |`;
  const types = ANSWER_TYPES.filter((t) => names.some((n) => s.methods[n].byType[t]));
  return `### ${s.split} split: ${s.questions} questions, top-1 is the gold passage for ${s.top1IsGold}${s.unresolved.length ? `; unresolved (no single gold passage): ${s.unresolved.join(', ')}` : ''}

Each cell: span contains the gold span · sentence contains it · mean words in the span.

| | ${names.join(' | ')} |
| --- | ${names.map(() => '---').join(' | ')} |
${row('top-1 gold passages', (m) => m.top1Gold)}
${row('all gold passages', (m) => m.goldPassage)}
${types.map((t) => row(`type ${t} (gold passages)`, (m) => m.byType[t])).join('\n')}

Question types classified differently from the set's label: ${s.typeMismatches.length ? s.typeMismatches.join(', ') : 'none'}.
${s.failures.length ? `\nTyped misses (span):\n\n${s.failures.map((f) => `- ${f.id} "${f.question}" gold «${f.gold}»; typed «${f.typed.slice(0, 160)}»`).join('\n')}\n` : ''}`;
}

export function proseMarkdown(r: ProseReport): string {
  const fb = r.factbookLabels;
  return `# Answers in prose: ${r.dataset}

Generated by \`${r.command}\` in ${Math.round(r.seconds)} s. Corpus: ${r.corpus.documents} documents, ${r.corpus.passages} passages.

${r.splits.map(splitMarkdown).join('\n')}
${
  fb
    ? `### Factbook labels (capital quiz, test split, gold Government › Capital passages): ${fb.questions} questions

| | ${Object.keys(fb.methods).join(' | ')} |
| --- | ${Object.keys(fb.methods)
        .map(() => '---')
        .join(' | ')} |
| span contains the capital | ${Object.values(fb.methods)
        .map((m) => `${m.span} (${pct(m.spanShare)} %)`)
        .join(' | ')} |
| sentence contains it | ${Object.values(fb.methods)
        .map((m) => `${m.sentence} (${pct(m.sentenceShare)} %)`)
        .join(' | ')} |
`
    : ''
}`;
}

/** The whole run: the corpus loaded once, dev and test splits, the Factbook label check; JSON and Markdown written to outDir. */
export async function runProseEvaluation(
  setup: RunSetup & { outDir: string; cacheDir: string; command: string; splits?: Split[]; factbook?: boolean },
): Promise<string[]> {
  const started = process.hrtime.bigint();
  const dataset = buildProse();
  setup.log(`${dataset.name}: ${dataset.documents.length} documents, ${dataset.prose.length} questions`);
  const corpus = await loadCorpus(dataset, setup);
  try {
    const splits: ProseSplitReport[] = [];
    for (const split of setup.splits ?? (['dev', 'test'] as Split[])) {
      splits.push(await evaluateProseSplit(dataset, corpus, split));
      const m = splits.at(-1)!.methods;
      setup.log(
        `${split}: span today ${pct(m.today.goldPassage.spanShare)} % → typed ${pct(m.typed.goldPassage.spanShare)} %; sentence today ${pct(m.today.goldPassage.sentenceShare)} % → typed ${pct(m.typed.goldPassage.sentenceShare)} % (gold passages)`,
      );
    }
    const factbookLabelScores = setup.factbook === false ? undefined : await factbookLabels(corpus, setup.cacheDir);
    const report: ProseReport = {
      dataset: dataset.name,
      command: setup.command,
      corpus: corpus.stats,
      splits,
      ...(factbookLabelScores ? { factbookLabels: factbookLabelScores } : {}),
      seconds: Number(process.hrtime.bigint() - started) / 1e9,
    };
    mkdirSync(setup.outDir, { recursive: true });
    const json = path.join(setup.outDir, `${dataset.name}.json`);
    const md = path.join(setup.outDir, `${dataset.name}.md`);
    writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(md, proseMarkdown(report));
    return [json, md];
  } finally {
    await corpus.close();
  }
}

export type { ProseQuestion };
