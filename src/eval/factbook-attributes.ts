/**
 * Entity–attribute questions on the Factbook corpus: a question names a country (the entity, a
 * document) and asks one of its facts (the attribute, a section): "What currency does Belgium
 * use?" → Belgium › Economy › Exchange rates. One question a country, its form chosen by a hash of
 * the country's key, and only where the country's profile has that section. The forms are
 * paraphrases, as users ask: some share a word with the section's title ("What religions are
 * practiced in X?" → Religions), some none ("How long do people live in X?" → Life expectancy at
 * birth), which only the dense side can bridge. Judged by gold section (no answer strings). The
 * corpus is the factbook set's (`corpus: 'factbook'`, one cached load for both).
 */
import { createHash } from 'node:crypto';
import { readFactbook } from '../ingest/factbook';
import type { EvalDataset, EvalQuestion } from './types';

/** The forms: the question, with {X} for the country, and the section (below the document) it asks for. */
export const ATTRIBUTE_FORMS: ReadonlyArray<readonly [string, readonly [string, string]]> = [
  ['What currency does {X} use?', ['Economy', 'Exchange rates']],
  ['How long do people live in {X}?', ['People and Society', 'Life expectancy at birth']],
  ['What is the climate like in {X}?', ['Geography', 'Climate']],
  ['What natural resources does {X} have?', ['Geography', 'Natural resources']],
  ['What religions are practiced in {X}?', ['People and Society', 'Religions']],
  ['Who leads the government of {X}?', ['Government', 'Executive branch']],
  ['What is the national anthem of {X}?', ['Government', 'National anthem']],
  ['What does {X} export?', ['Economy', 'Exports - commodities']],
  ['When did {X} become independent?', ['Government', 'Independence']],
  ['How many people live in {X}?', ['People and Society', 'Population']],
];

export function buildFactbookAttributes(): EvalDataset {
  const documents = readFactbook();
  const questions: EvalQuestion[] = [];
  for (const d of documents) {
    const [form, [group, field]] = ATTRIBUTE_FORMS[createHash('sha256').update(d.key!).digest()[0] % ATTRIBUTE_FORMS.length];
    const has = (d.sections ?? []).some((s) => s.title === group && (s.sections ?? []).some((c) => c.title === field));
    if (!has) continue;
    questions.push({
      id: `attribute/${d.key}`,
      question: form.replace('{X}', d.title!),
      goldDocuments: [d.key!],
      goldSections: [{ document: d.key!, path: [group, field] }],
      shape: field,
    });
  }
  return {
    name: 'factbook-attributes',
    corpus: 'factbook',
    description: 'CIA World Factbook (the factbook corpus) with entity–attribute questions: a country named, one of its facts asked for in words of its own',
    documents,
    questions,
    stats: { corpusDocuments: documents.length, forms: ATTRIBUTE_FORMS.length, questions: questions.length },
    notes: [],
  };
}
