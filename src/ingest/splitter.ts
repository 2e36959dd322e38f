/**
 * Passage splitting (DHR: passages of at most ~100 words, never crossing a section boundary —
 * callers split one section's text at a time). Blocks follow sentence boundaries where they can,
 * so a passage rarely starts mid-sentence; only a sentence longer than the limit is cut.
 */

export interface TextBlock {
  /** The block's words joined by single spaces. */
  text: string;
  wordCount: number;
  /** Offset of the block's first character in the input. */
  start: number;
  /** Offset just past the block's last character in the input. */
  end: number;
}

interface Word {
  text: string;
  start: number;
  end: number;
}

/** Abbreviations after which a period does not end a sentence (lower-cased, with their dots). */
const ABBREVIATIONS = new Set([
  'e.g.', 'i.e.', 'cf.', 'vs.', 'viz.', 'approx.', 'ca.', 'nos.', 'fig.', 'figs.', 'vol.', 'pp.', 'p.',
  'mr.', 'mrs.', 'ms.', 'dr.', 'prof.', 'sr.', 'jr.', 'st.', 'mt.', 'gen.', 'col.', 'lt.', 'sgt.', 'capt.', 'gov.', 'rev.',
  'inc.', 'ltd.', 'co.', 'corp.', 'dept.', 'est.', 'jan.', 'feb.', 'mar.', 'apr.', 'jun.', 'jul.', 'aug.', 'sep.',
  'sept.', 'oct.', 'nov.', 'dec.',
]);

/** Abbreviations that often end a sentence: they end one only when the next word is capitalized. */
const SOFT_ABBREVIATIONS = new Set(['etc.', 'al.', 'no.']);

const SENTENCE_END = /[.!?]+["'”’)\]}»]*$/;
const CLOSERS = /["'”’)\]}»]+$/;
const OPENERS = /^["'“‘(\[{«]+/;
/** A blank line (possibly holding spaces) between two words: a paragraph break. */
const PARAGRAPH_BREAK = /\n[ \t\f\v\r]*\n/;

function wordsOf(text: string): Word[] {
  const words: Word[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    words.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  }
  return words;
}

/** Whether the sentence ends after `word` (the word before `next`), by punctuation alone. */
function endsSentence(word: string, next: string | undefined): boolean {
  if (!SENTENCE_END.test(word)) return false;
  if (next === undefined) return true;
  const bare = word.replace(CLOSERS, '').replace(OPENERS, '');
  if (!bare.endsWith('.')) return true; // "!" or "?" always end a sentence
  const lower = bare.toLowerCase();
  if (ABBREVIATIONS.has(lower)) return false;
  // Initials ("J.") and dotted abbreviations ("U.S.", "a.m."): one letter per dot.
  if (/^\p{Lu}\.$/u.test(bare) || /^(\p{L}\.){2,}$/u.test(bare)) return false;
  if (SOFT_ABBREVIATIONS.has(lower)) return /^["'“‘(\[{«]*\p{Lu}/u.test(next);
  return true;
}

/** Sentences as half-open word-index ranges. */
function sentencesOf(text: string, words: Word[]): Array<[number, number]> {
  const sentences: Array<[number, number]> = [];
  let first = 0;
  for (let i = 0; i < words.length; i++) {
    const next = words[i + 1];
    const atEnd =
      next === undefined ||
      endsSentence(words[i].text, next.text) ||
      PARAGRAPH_BREAK.test(text.slice(words[i].end, next.start));
    if (atEnd) {
      sentences.push([first, i + 1]);
      first = i + 1;
    }
  }
  return sentences;
}

/** The sentences of `text` (whitespace normalized), as the splitter sees them. */
export function splitSentences(text: string): string[] {
  const words = wordsOf(text);
  return sentencesOf(text, words).map(([from, to]) =>
    words
      .slice(from, to)
      .map((w) => w.text)
      .join(' '),
  );
}

/**
 * Split `text` into disjoint, ordered blocks of at most `maxWords` words, packing whole sentences
 * greedily; together the blocks hold every word of `text` exactly once. With `fits`, a block must
 * also satisfy it (the passage encoder's token budget: a passage longer than the encoder reads is
 * clipped, and the clipped words are invisible to dense retrieval); a sentence that does not fit
 * alone is cut at the most words that do (at least one word per block, so splitting always ends).
 */
export function splitPassages(text: string, maxWords: number, fits?: (blockText: string) => boolean): TextBlock[] {
  if (!Number.isInteger(maxWords) || maxWords < 1) {
    throw new RangeError(`maxWords must be an integer >= 1, got ${maxWords}`);
  }
  const words = wordsOf(text);
  const blocks: TextBlock[] = [];
  const join = (from: number, to: number): string =>
    words
      .slice(from, to)
      .map((w) => w.text)
      .join(' ');
  const ok = (from: number, to: number): boolean => to - from <= maxWords && (fits === undefined || fits(join(from, to)));
  const emit = (from: number, to: number): void => {
    if (to <= from) return;
    blocks.push({ text: join(from, to), wordCount: to - from, start: words[from].start, end: words[to - 1].end });
  };
  /** Cut words [from, to) into blocks that each hold as many words as fit (binary search per block). */
  const cut = (from: number, to: number): void => {
    let at = from;
    while (at < to) {
      let lo = at + 1; // one word always goes in
      let hi = Math.min(to, at + maxWords);
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (ok(at, mid)) lo = mid;
        else hi = mid - 1;
      }
      emit(at, lo);
      at = lo;
    }
  };

  let blockStart = 0; // first word of the block being packed
  let blockEnd = 0; // one past its last word
  for (const [from, to] of sentencesOf(text, words)) {
    if (blockEnd > blockStart && ok(blockStart, to)) {
      blockEnd = to;
      continue;
    }
    emit(blockStart, blockEnd);
    if (ok(from, to)) {
      blockStart = from;
      blockEnd = to;
    } else {
      // A sentence too long for any block: cut it on its own.
      cut(from, to);
      blockStart = blockEnd = to;
    }
  }
  emit(blockStart, blockEnd);
  return blocks;
}
