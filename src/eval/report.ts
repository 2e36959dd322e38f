/**
 * The report of one data set: JSON (aggregates and a few examples, never whole rankings), a
 * Markdown page with the tables, and SVG charts, all in the output folder.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_MODE, MODES, type RetrievalMode } from '../retrieval/modes';
import type { AdapterEvaluation } from './adapters';
import { findsFewerAt100, type SelfTunedEvaluation } from './self-tuned';
import { adapterSection } from './adapters-report';
import { questionEncoderSection, type QuestionEncoderEvaluation } from './question-encoder';
import { accuracyChart, curveChart, renderSvg } from './charts';
import { judged, type EvalOutcome, type FailureExample, type Sweep } from './evaluate';
import type { Corpus } from './run';
import { KS, targetScores, type RankScores, type Scores, type Target } from './scores';
import type { EvalDataset } from './types';

export interface EvalReport extends EvalOutcome {
  dataset: string;
  description: string;
  command: string;
  stats: EvalDataset['stats'];
  notes: string[];
  corpus: Corpus['stats'];
  models: { document: string; passage: string };
  settings: { k1: number; k2: number; k1Sweep: number[]; search: string; database: string };
  machine: { cpus: number; cpuModel: string; node: string; platform: string };
  runtimeSeconds: number;
  /** `dhr eval --adapters`: the query-side adapter runs on the test split. */
  adapters?: AdapterEvaluation;
  /** `dhr eval --self-tune`: the default mode at the settings dhr tune chose on the corpus alone. */
  selfTuned?: SelfTunedEvaluation;
  /** `dhr eval --question-encoder <folder>`: a fine-tuned question encoder on the test split. */
  questionEncoder?: QuestionEncoderEvaluation;
}

export function buildReport(
  dataset: EvalDataset,
  corpus: Corpus,
  outcome: EvalOutcome,
  settings: { k1: number; k2: number; k1Sweep: number[] },
  runtimeSeconds: number,
): EvalReport {
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    dataset: dataset.name,
    description: dataset.description,
    command: `npm run eval:${dataset.name}`,
    stats: dataset.stats,
    notes: dataset.notes,
    corpus: { ...corpus.stats, ingestSeconds: r1(corpus.stats.ingestSeconds), embedSeconds: r1(corpus.stats.embedSeconds) },
    models: { document: corpus.targets.document.name, passage: corpus.targets.passage.name },
    settings: { ...settings, search: 'exact inner products (no HNSW), for reproducible rankings', database: 'PGlite, in memory, fresh per run' },
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${os.platform()} ${os.arch()}` },
    runtimeSeconds: r1(runtimeSeconds),
    ...outcome,
  };
}

const pct = (x: number | undefined) => (x === undefined ? '–' : (100 * x).toFixed(1));
const targetName: Record<Target, string> = { answer: 'answer', section: 'gold section', document: 'gold document' };

function modeRow(mode: RetrievalMode, s: Scores, report: EvalReport, label: string = mode, params = report.modeParams[mode]): string {
  const cells = [label];
  const docOnly = MODES[mode].documentsOnly;
  const ranks = (r: RankScores | null) => KS.map((k) => pct(r?.top[String(k)]));
  if (report.target === 'answer') cells.push(...ranks(docOnly ? null : s.answer));
  cells.push(...ranks(s.document));
  if (report.modes.HIERARCHICAL?.section) cells.push(...ranks(docOnly ? null : s.section));
  cells.push(pct(s.stage?.top['20']), pct(s.stage?.top['100']));
  const t = judged(s, mode, report.target);
  const bound = typeof params?.perDocument === 'number' && params.perDocument < report.settings.k2 ? `≤ ${params.perDocument} per document` : '';
  const p = params
    ? [MODES[mode].usesLambda ? `λ ${params.lambda}` : '', MODES[mode].usesAlpha ? `α ${params.alpha}` : '', bound].filter(Boolean).join(', ')
    : '';
  cells.push(t ? t.mrr20.toFixed(3) : '–', s.latencyMs.p50.toFixed(1), s.latencyMs.p95.toFixed(1), p || '–');
  return `| ${cells.join(' | ')} |`;
}

function modeTable(report: EvalReport): string {
  const head = ['mode'];
  const ks = (label: string) => KS.map((k) => `${label}@${k}`);
  if (report.target === 'answer') head.push(...KS.map((k) => `Top-${k}`));
  head.push(...ks('doc'));
  const section = report.modes.HIERARCHICAL?.section;
  if (section) head.push(...ks('sec'));
  head.push('stage@20', `stage@${report.settings.k1}`, `MRR@20 (${targetName[report.target]})`, 'p50 ms', 'p95 ms', 'settings');
  const rows = Object.entries(report.modes).map(([mode, s]) =>
    modeRow(mode as RetrievalMode, s!, report, mode === DEFAULT_MODE ? `**${mode}** (default)` : mode),
  );
  rows.push(modeRow(DEFAULT_MODE, report.defaultAtDevBest.scores, report, `${DEFAULT_MODE} at this set's dev-best`, report.defaultAtDevBest.params));
  const bounded = report.defaultAtDevPerDocument;
  if (bounded)
    rows.push(
      modeRow(
        DEFAULT_MODE,
        bounded.scores,
        report,
        `${DEFAULT_MODE} at this set's dev-best perDocument (PER_DOCUMENT=${bounded.params.perDocument})`,
        bounded.params,
      ),
    );
  const tuned = report.selfTuned;
  if (tuned)
    rows.push(
      modeRow(
        DEFAULT_MODE,
        tuned.scores,
        report,
        `${DEFAULT_MODE} self-tuned (dhr tune on the corpus, no labels: ${tuned.tune.change ? tuned.tune.chosen : 'kept the defaults'})`,
        tuned.params,
      ),
    );
  return [`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows].join('\n');
}

export function sweepTable(sw: Sweep): string {
  const names = Object.keys(sw.points[0]?.params ?? {});
  const head = [...names, 'Top-1', 'Top-5', 'Top-20', 'Top-100', 'MRR@20'];
  const rows = sw.points.map((p) => {
    // by params, not identity: a sweep reused from an earlier report's JSON holds a copy of its best
    const best = JSON.stringify(p.params) === JSON.stringify(sw.best.params) ? '**' : '';
    return `| ${[...names.map((n) => `${best}${p.params[n]}${best}`), ...KS.map((k) => pct(p.top[String(k)])), p.mrr20.toFixed(3)].join(' | ')} |`;
  });
  return [
    `**${sw.mode}**, ${sw.varied}; judged by ${sw.judged}; best in bold.`,
    '',
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---:').join(' | ')} |`,
    ...rows,
  ].join('\n');
}

function example(e: FailureExample): string {
  const ranks = Object.entries(e.ranks)
    .map(([m, r]) => `${m} ${r ?? '>100'}`)
    .join(', ');
  const lines = [`- **${e.question}** — gold: ${e.gold.slice(0, 4).join('; ')}${e.gold.length > 4 ? '; …' : ''}. First hit: ${ranks}.`];
  lines.push(`  - ${DEFAULT_MODE}'s top result: ${e.defaultTop[0] ?? '(none)'}`);
  if (e.foundBy) lines.push(`  - ${e.foundBy.mode} found: ${e.foundBy.result}`);
  return lines.join('\n');
}

export function markdown(report: EvalReport): string {
  const target = targetName[report.target];
  const best = report.lambdaSweep.find((p) => p.lambda === report.lambda)!;
  const fused: RetrievalMode[] = ['HIERARCHICAL', 'PARALLEL'];
  const lambdaRows = fused.map((m) => {
    const at1 = targetScores(report.modesAtLambda1[m]!, report.target)!;
    const atBest = targetScores(report.modes[m]!, report.target)!;
    return `| ${m} | ${pct(at1.top['20'])} | ${pct(atBest.top['20'])} | ${at1.mrr20.toFixed(3)} | ${atBest.mrr20.toFixed(3)} |`;
  });
  const k1Rows = report.k1Sweep.map(({ k1, scores }) => {
    const t = targetScores(scores, report.target)!;
    return `| ${k1} | ${KS.map((k) => pct(t.top[String(k)])).join(' | ')} | ${t.mrr20.toFixed(3)} | ${pct(scores.stage?.top['100'])} | ${scores.latencyMs.p50.toFixed(1)} |`;
  });
  const coarse = report.lambdaSweep.filter((p) => p.phase === 'coarse');
  const stats = Object.entries(report.stats)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `# Evaluation: ${report.dataset}

Generated by \`${report.command}\` — do not edit by hand. ${report.description}.

- Data: ${stats}.
- Corpus as ingested: ${report.corpus.documents} documents, ${report.corpus.sections} sections, ${report.corpus.passages} passages (ingest ${report.corpus.ingestSeconds} s, embedding ${report.corpus.embedSeconds} s). Clipped to the encoder's token budget when embedded: ${report.corpus.truncated} texts, ${pct(report.corpus.truncatedShare)}% of documents' summaries and passages.
- Model: ${report.models.document === report.models.passage ? report.models.document : `${report.models.document} / ${report.models.passage}`}; ${report.settings.database}; ${report.settings.search}.
- Questions: ${report.split.dev} dev, ${report.split.test} test (split by a hash of the question id). Judged by **${target}** Top-k${report.target === 'answer' ? ' (DPR: the normalised answer string occurs in the passage)' : ''}.
- λ chosen on dev as in DHR §5.3 (step 0.1 over [0, 2], then 0.01 around the best; Top-20, ties to higher MRR@20, then to λ nearest 1): **λ = ${report.lambda}** (dev Top-20 ${pct(best.top20)}, MRR@20 ${best.mrr20.toFixed(3)}). k1 = ${report.settings.k1}, k2 = ${report.settings.k2}.
- Machine: ${report.machine.cpus} CPUs (${report.machine.cpuModel}), Node ${report.machine.node}, ${report.machine.platform}. Whole run: ${report.runtimeSeconds} s. Latency is per \`retrieve\` call (question encoding + SQL), shared machine, so only the rankings are reproducible.
${report.notes.map((n) => `- ${n}`).join('\n')}

## Modes on the test split

Every mode at the product's defaults (HIERARCHICAL and PARALLEL at the λ chosen on dev, ${report.lambda}); the last row is the default mode at this set's own dev-best settings. Percentages; doc@k / sec@k: a passage of a gold document / inside a gold section among the first k (DOCUMENTS and LEXICAL_DOCUMENTS rank documents, so only doc@k applies)${report.modes.HIERARCHICAL?.section ? `; sec@k over the ${report.modes.HIERARCHICAL.section.questions} test questions with a gold section` : ''}; stage@k: a gold document among the first k documents of the document stage (k1 = ${report.settings.k1}), for modes that have one.

${modeTable(report)}

## Dev sweeps (hybrid weight, λ, BM25)

${report.sweeps.map(sweepTable).join('\n\n')}

![Top-k accuracy per mode](${report.dataset}-accuracy.svg)

## λ (HIERARCHICAL, DHR §5.3)

What tuning λ bought on the test split (${target} Top-20 and MRR@20, λ = 1 vs λ = ${report.lambda}):

| mode | Top-20 λ=1 | Top-20 λ=${report.lambda} | MRR@20 λ=1 | MRR@20 λ=${report.lambda} |
| --- | ---: | ---: | ---: | ---: |
${lambdaRows.join('\n')}

Dev sweep (coarse grid; the chart adds the fine grid): ${coarse.map((p) => `${p.lambda}: ${pct(p.top20)}`).join(', ')}.

![λ sweep on the dev split](${report.dataset}-lambda.svg)

## k1 (${DEFAULT_MODE}, test split, its default settings)

stage@100: a gold document among the documents stage 1 kept.

| k1 | Top-1 | Top-5 | Top-20 | Top-100 | MRR@20 | stage@100 | p50 ms |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${k1Rows.join('\n')}

![k1 sweep](${report.dataset}-k1.svg)

${highlightSection(report)}${report.selfTuned ? selfTunedSection(report.selfTuned) : ''}${report.adapters ? adapterSection(report.adapters) : ''}${report.questionEncoder ? questionEncoderSection(report.questionEncoder) : ''}## Where ${DEFAULT_MODE} loses (test split)

${report.losses.length ? report.losses.map(example).join('\n') : `No test question where ${DEFAULT_MODE} missed the top 20.`}

## Where it wins (${DEFAULT_MODE} in the top 20, LEXICAL and HIERARCHICAL not)

${report.wins.length ? report.wins.map(example).join('\n') : 'None.'}
`;
}

/** The answer highlights (ScoredPassage.answer) of the default mode's top 5, when the set has answer strings. */
function highlightSection(report: EvalReport): string {
  const h = report.highlights;
  if (!h) return '';
  return `## Answer highlights (${DEFAULT_MODE}, test split)

\`ScoredPassage.answer\` on the default mode's top ${h.passages} passages. Of the ${h.top1Contains} questions (of ${h.questions}) whose top-1 passage contains the answer, the highlight contains it for **${h.spanContains} (${pct(h.spanShare)}%)**, the highlighted sentence for ${h.sentenceContains} (${pct(h.sentenceShare)}%). Top-1 answer accuracy counting only the highlight: **${pct(h.top1HighlightAccuracy)}%** (the whole passage: ${pct(h.top1PassageAccuracy)}%). Highlighting ${h.passages} passages, cold (nothing cached): p50 ${h.highlightMs.p50} ms, p95 ${h.highlightMs.p95} ms per question, against p50 ${h.retrieveMs.p50} ms for the retrieval itself.

`;
}

/** Write JSON, Markdown and the three charts; returns the paths written. */
export async function writeReport(report: EvalReport, outDir: string): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const name = report.dataset;
  const target = targetName[report.target];
  const files: Array<[string, string]> = [];
  const accuracyRows = Object.entries(report.modes).flatMap(([mode, s]) => {
    const t = judged(s!, mode as RetrievalMode, report.target);
    return t ? KS.map((k) => ({ mode, k, accuracy: t.top[String(k)] })) : [];
  });
  files.push([
    `${name}-accuracy.svg`,
    await renderSvg(accuracyChart(`${name}: ${target} Top-k, test split (λ = ${report.lambda})`, `${target} Top-k accuracy`, accuracyRows)),
  ]);
  const lambdaRows = report.lambdaSweep.flatMap((p) => [
    { x: p.lambda, value: p.top20, series: 'Top-20' },
    { x: p.lambda, value: p.mrr20, series: 'MRR@20' },
  ]);
  files.push([
    `${name}-lambda.svg`,
    await renderSvg(curveChart(`${name}: HIERARCHICAL on the dev split`, 'λ', lambdaRows, `${target}: Top-20 and MRR@20 (dev)`, report.lambda)),
  ]);
  const k1Rows = report.k1Sweep.flatMap(({ k1, scores }) => {
    const t = targetScores(scores, report.target)!;
    return [
      { x: k1, value: t.top['20'], series: 'Top-20' },
      { x: k1, value: t.top['100'], series: 'Top-100' },
      { x: k1, value: t.mrr20, series: 'MRR@20' },
    ];
  });
  files.push([
    `${name}-k1.svg`,
    await renderSvg(curveChart(`${name}: ${DEFAULT_MODE} by k1, test split`, 'k1', k1Rows, `${target} (test)`, report.settings.k1, true)),
  ]);
  files.push([`${name}.json`, `${JSON.stringify(report, null, 2)}\n`]);
  files.push([`${name}.md`, markdown(report)]);
  for (const [file, content] of files) writeFileSync(path.join(outDir, file), content);
  return files.map(([file]) => path.join(outDir, file));
}

/** (a) and (b) on the dev split, and which one the product keeps for that reason. */
function devSection(d: SelfTunedEvaluation['dev']): string {
  const row = (name: string, r: RankScores) => `| ${name} | ${KS.map((k) => pct(r.top[String(k)])).join(' | ')} | ${r.mrr20.toFixed(3)} |`;
  const verdict =
    d.favours === 'tie'
      ? 'On the dev split the two tie (equal MRR@20, Top-20 and Top-1): the global defaults stay.'
      : `The dev split favours ${d.favours === 'defaults' ? 'the global defaults (a)' : 'the self-tuned settings (b)'}${
          d.favours === 'defaults' && findsFewerAt100(d.defaults, d.selfTuned)
            ? ' (the self-tuned settings find fewer answers in the top 100, which rules them out whatever the first ranks)'
            : ''
        }.`;
  return `
Dev split (${d.questions} questions), where the choice between them is made:

| default mode on the dev split | Top-1 | Top-5 | Top-20 | Top-100 | MRR@20 |
|---|---:|---:|---:|---:|---:|
${row('(a) global defaults', d.defaults)}
${row('(b) self-tuned', d.selfTuned)}

${verdict}
`;
}

/** What `dhr tune` saw and chose on this corpus (the row is in the mode table). */
function selfTunedSection(t: SelfTunedEvaluation): string {
  const q = Object.entries(t.tune.questions)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const m = t.tune.pseudoMrr;
  return `## Self-tuned: dhr tune on the corpus alone

Pseudo-questions: ${q}. On them, MRR@20: chosen ${m.chosen.toFixed(3)}, built-in defaults ${m.defaults.toFixed(3)}, LEXICAL ${m.lexical.toFixed(3)}, HYBRID ${m.hybrid.toFixed(3)}. ${t.tune.change ? 'Changed' : 'Kept the defaults'}: ${t.tune.reason}.${t.tune.passageBudget ? ` Stage 2's passage budget ${t.tune.passageBudget.chosen ?? 'none'} (stage 2 ≈ ${t.tune.passageBudget.stage2Passages} passages without one): ${t.tune.passageBudget.reason}.` : ''} Tuning took ${t.tune.seconds.toFixed(0)} s. Its test-split scores are the "self-tuned" row of the table above.
${devSection(t.dev)}
`;
}
