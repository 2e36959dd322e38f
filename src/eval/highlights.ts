/**
 * Answer highlights measured: of the questions whose top-1 passage contains the
 * answer, the share whose highlight contains it; Top-1 answer accuracy when only the highlight
 * counts; and what highlighting the top 5 passages costs per question, cold (a fresh cache per
 * question, so no passage is served from an earlier question's work).
 */
import { AnswerHighlighter } from '../retrieval/highlight';
import { retrieve } from '../retrieval/retrieve';
import { hasAnswer, percentile } from './metrics';
import { retrieveParts, type Corpus, type RunParams } from './run';
import type { EvalQuestion } from './types';

export interface HighlightScores {
  /** Questions with answer strings that were asked. */
  questions: number;
  /** Of them, whose top-1 passage contains an answer. */
  top1Contains: number;
  /** Of those, whose highlight (the answer span) contains it, and whose highlighted sentence does. */
  spanContains: number;
  sentenceContains: number;
  /** spanContains / top1Contains: the goal is ≥ 0.85. */
  spanShare: number;
  sentenceShare: number;
  /** Top-1 answer accuracy counting only the highlight (spanContains / questions), next to the passage's (top1Contains / questions). */
  top1HighlightAccuracy: number;
  top1PassageAccuracy: number;
  /** Highlighting the top `passages` passages, cold, per question; and the retrieval itself, for scale. */
  passages: number;
  highlightMs: { p50: number; p95: number };
  retrieveMs: { p50: number; p95: number };
}

const r4 = (x: number) => Math.round(x * 10000) / 10000;
const r1 = (x: number) => Math.round(x * 10) / 10;
const since = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

export async function measureHighlights(corpus: Corpus, questions: readonly EvalQuestion[], params: RunParams, passages = 5): Promise<HighlightScores> {
  const encoders = { question: corpus.targets.encoders.byRole.questionPassage, passage: corpus.targets.encoders.byRole.passage };
  const asked = questions.filter((q) => q.answers?.length);
  let top1Contains = 0;
  let spanContains = 0;
  let sentenceContains = 0;
  const highlightMs: number[] = [];
  const retrieveMs: number[] = [];
  for (const q of asked) {
    const { args, options } = retrieveParts(params);
    let t = process.hrtime.bigint();
    const result = await retrieve(corpus.db, corpus.targets, { question: q.question, ...args, k2: Math.max(args.k2, passages) }, options);
    retrieveMs.push(since(t));
    const top = result.passages.slice(0, passages).map((p) => corpus.passages.get(p.passageId)!.text);
    if (top.length === 0) continue;
    const highlighter = new AnswerHighlighter(encoders);
    t = process.hrtime.bigint();
    // As the API resolves them: every passage's answer at once, one encoder batch, reusing the
    // question vector the retrieval computed.
    const answers = await Promise.all(top.map((text) => highlighter.highlight(q.question, text, result.questionForPassages)));
    highlightMs.push(since(t));
    if (!hasAnswer(top[0], q.answers!)) continue;
    top1Contains++;
    if (answers[0] && hasAnswer(answers[0].text, q.answers!)) spanContains++;
    if (answers[0] && hasAnswer(answers[0].sentence.text, q.answers!)) sentenceContains++;
  }
  const share = (n: number, of: number) => (of > 0 ? r4(n / of) : 0);
  return {
    questions: asked.length,
    top1Contains,
    spanContains,
    sentenceContains,
    spanShare: share(spanContains, top1Contains),
    sentenceShare: share(sentenceContains, top1Contains),
    top1HighlightAccuracy: share(spanContains, asked.length),
    top1PassageAccuracy: share(top1Contains, asked.length),
    passages,
    highlightMs: { p50: r1(percentile(highlightMs, 50)), p95: r1(percentile(highlightMs, 95)) },
    retrieveMs: { p50: r1(percentile(retrieveMs, 50)), p95: r1(percentile(retrieveMs, 95)) },
  };
}
