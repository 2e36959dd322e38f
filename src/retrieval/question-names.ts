import type { Database } from '../store/db';
import { Params } from './statements/params';
import { questionNamesStatement } from './statements/title-links';
import type { RetrievalFilter } from './types';

/** A word of a question as titleLinkDense strips it: letters and digits, with the dots, apostrophes and hyphens inside names (os.path, O'Brien). */
const WORD = /[\p{L}\p{N}](?:[\p{L}\p{N}._'’-]*[\p{L}\p{N}])?/gu;

/**
 * The question without the document names it holds (title links, before stage 1 confirms them):
 * "How long do people live in Norway?" → "How long do people live in?". Stage 2 encodes it as the
 * question's attribute: its passages all belong to the named document, so the name says nothing
 * about which of them answers, and a passage that repeats the name (Country name) would otherwise
 * win on it. A name goes where its words stand together (stop words between them, as in "Isle of
 * Man", go with them) and their lexemes are the name's (English analysis, as BM25's), so a word
 * of the name used elsewhere in the question stays. Undefined when the question names no
 * document, or is nothing but names.
 */
export async function questionWithoutNames(db: Database, question: string, filter: RetrievalFilter | undefined): Promise<string | undefined> {
  const words = [...question.matchAll(WORD)];
  if (words.length === 0) return undefined;
  const p = new Params((v) => v);
  const sql = questionNamesStatement(
    question,
    words.map((w) => w[0]),
    filter,
    p,
  );
  const [row] = await db.query<{ names: string[][]; words: string[][] }>(sql, p.values);
  if (row.names.length === 0) return undefined;
  const names = new Set(row.names.map((n) => [...new Set(n)].sort().join(' ')));
  const inSomeName = new Set(row.names.flat());
  const lexemes = words.map((_, i) => row.words[i] ?? []);
  const named = lexemes.map((l) => l.length > 0 && l.every((x) => inSomeName.has(x)));
  const drop = new Array<boolean>(words.length).fill(false);
  // Spans that are a name whole: from a named word to a named word, only named words and stop words
  // (no lexemes) between them, their lexemes the name's. The shortest win ("the river in River
  // Town" drops "River Town", not "river in River Town"), and spans never overlap.
  const spans: [number, number][] = [];
  for (let i = 0; i < words.length; i++) {
    if (!named[i]) continue;
    const set = new Set<string>();
    for (let j = i; j < words.length && (named[j] || lexemes[j].length === 0); j++) {
      if (!named[j]) continue;
      for (const l of lexemes[j]) set.add(l);
      if (names.has([...set].sort().join(' '))) spans.push([i, j]);
    }
  }
  spans.sort((a, b) => a[1] - a[0] - (b[1] - b[0]) || b[0] - a[0]);
  for (const [i, j] of spans) {
    if (drop.slice(i, j + 1).some(Boolean)) continue;
    for (let k = i; k <= j; k++) drop[k] = true;
  }
  if (!drop.some(Boolean) || lexemes.every((l, i) => drop[i] || l.length === 0)) return undefined;
  let out = '';
  let at = 0;
  words.forEach((w, i) => {
    if (!drop[i]) return;
    out += question.slice(at, w.index);
    at = w.index! + w[0].length;
  });
  out += question.slice(at);
  return out
    .replace(/\s+([?.!,;:])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();
}
