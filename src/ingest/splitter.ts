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
 * greedily; together the blocks hold every word of `text` exactly once.
 */
export function splitPassages(text: string, maxWords: number): TextBlock[] {
  if (!Number.isInteger(maxWords) || maxWords < 1) {
    throw new RangeError(`maxWords must be an integer >= 1, got ${maxWords}`);
  }
  const words = wordsOf(text);
  const blocks: TextBlock[] = [];
  const emit = (from: number, to: number): void => {
    if (to <= from) return;
    const slice = words.slice(from, to);
    blocks.push({
      text: slice.map((w) => w.text).join(' '),
      wordCount: to - from,
      start: slice[0].start,
      end: slice[slice.length - 1].end,
    });
  };

  let blockStart = 0; // first word of the block being packed
  let blockEnd = 0; // one past its last word
  for (const [from, to] of sentencesOf(text, words)) {
    const length = to - from;
    if (length > maxWords) {
      // A sentence too long for any block: close the open block, then cut the sentence.
      emit(blockStart, blockEnd);
      for (let at = from; at < to; at += maxWords) emit(at, Math.min(at + maxWords, to));
      blockStart = blockEnd = to;
    } else if (blockEnd - blockStart + length > maxWords) {
      emit(blockStart, blockEnd);
      blockStart = from;
      blockEnd = to;
    } else {
      blockEnd = to;
    }
  }
  emit(blockStart, blockEnd);
  return blocks;
}
