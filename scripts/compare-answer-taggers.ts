/**
 * Which NLP library finds the typed phrases of answer highlights best, on the DEV split
 * of the prose highlight set only. compromise is the product's (a dependency); wink-nlp with its
 * lite English model and chrono-node are compared without being dependencies:
 *
 *   npm install --no-save wink-nlp wink-eng-lite-web-model chrono-node
 *   npx tsx scripts/compare-answer-taggers.ts
 *
 * Each tagger replaces only the phrase finder (PickOptions.tagger); question types, sentence
 * scores and span choice stay the same. Prints span and sentence accuracy per tagger and type.
 */
import { corpusSetup } from '../src/cli/eval';
import { loadConfig } from '../src/config';
import { buildProse } from '../src/eval/prose';
import { evaluateProseSplit } from '../src/eval/prose-highlights';
import { loadCorpus } from '../src/eval/run';
import type { PickOptions } from '../src/retrieval/answer';
import { typedSpans, type TypedSpan } from '../src/retrieval/answer-spans';
import type { AnswerType } from '../src/retrieval/answer-types';

function winkTagger(): (text: string) => TypedSpan[] {
  const winkNLP = require('wink-nlp');
  const model = require('wink-eng-lite-web-model');
  const nlp = winkNLP(model);
  const its = nlp.its;
  const types: Record<string, AnswerType> = { DATE: 'date', TIME: 'date', CARDINAL: 'quantity', MONEY: 'quantity', PERCENT: 'quantity', DURATION: 'quantity' };
  return (text) => {
    const out: TypedSpan[] = [];
    let from = 0;
    for (const e of nlp.readDoc(text).entities().out(its.detail) as Array<{ value: string; type: string }>) {
      const type = types[e.type];
      const at = text.indexOf(e.value, from);
      if (!type || at < 0) continue;
      out.push({ start: at, end: at + e.value.length, type });
      from = at + e.value.length;
    }
    return out;
  };
}

function chronoTagger(): (text: string) => TypedSpan[] {
  const chrono = require('chrono-node');
  return (text) =>
    (chrono.parse(text) as Array<{ index: number; text: string }>).map((r) => ({ start: r.index, end: r.index + r.text.length, type: 'date' as const }));
}

async function main(): Promise<void> {
  const dataset = buildProse();
  const corpus = await loadCorpus(dataset, { ...corpusSetup(loadConfig(process.env)), corpusCacheDir: '.cache/eval-corpus', log: (l) => console.error(l) });
  try {
    const wink = winkTagger();
    const chrono = chronoTagger();
    const methods: Record<string, PickOptions> = {
      today: { typed: false },
      compromise: { typed: true },
      'wink-nlp': { typed: true, tagger: wink },
      'chrono-node': { typed: true, tagger: chrono },
      // Dates and numbers from wink, names and places from compromise.
      'wink + compromise names': { typed: true, tagger: (t) => [...wink(t), ...typedSpans(t).filter((s) => s.type === 'person' || s.type === 'place')] },
    };
    const r = await evaluateProseSplit(dataset, corpus, 'dev', methods);
    const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
    console.log(`dev split, ${r.questions} questions, all gold passages: span · sentence (and per type: span)`);
    for (const [name, m] of Object.entries(r.methods)) {
      const types = Object.entries(m.byType)
        .map(([t, s]) => `${t} ${pct(s.spanShare)}`)
        .join(', ');
      console.log(`${name}: ${pct(m.goldPassage.spanShare)} · ${pct(m.goldPassage.sentenceShare)}, ${m.goldPassage.meanSpanWords} words a span (${types})`);
    }
  } finally {
    await corpus.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
