/**
 * Passage splitting (DHR: passages of at most ~100 words, never crossing a section boundary —
 * callers split one section's text at a time). Blocks follow sentence boundaries where they can,
 * so a passage rarely starts mid-sentence; only a sentence longer than the limit is cut.
 */
import { findFences } from './fences';

export interface TextBlock {
  /** The block's words joined by single spaces; a code block's lines keep their breaks and indentation. */
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
  'e.g.',
  'i.e.',
  'cf.',
  'vs.',
  'viz.',
  'approx.',
  'ca.',
  'nos.',
  'fig.',
  'figs.',
  'vol.',
  'pp.',
  'p.',
  'mr.',
  'mrs.',
  'ms.',
  'dr.',
  'prof.',
  'sr.',
  'jr.',
  'st.',
  'mt.',
  'gen.',
  'col.',
  'lt.',
  'sgt.',
  'capt.',
  'gov.',
  'rev.',
  'inc.',
  'ltd.',
  'co.',
  'corp.',
  'dept.',
  'est.',
  'jan.',
  'feb.',
  'mar.',
  'apr.',
  'jun.',
  'jul.',
  'aug.',
  'sep.',
  'sept.',
  'oct.',
  'nov.',
  'dec.',
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
    const atEnd = next === undefined || endsSentence(words[i].text, next.text) || PARAGRAPH_BREAK.test(text.slice(words[i].end, next.start));
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
 * A unit the packer places whole when it can: one sentence of prose, or one code block (or, for a
 * code block too long for a passage, a run of its lines).
 */
interface Piece {
  words: Word[];
  /** Code keeps its lines and their indentation; prose is its words joined by single spaces. */
  code: string | null;
}

/** The words of `text` between `from` and `to`, with offsets into the whole of `text`. */
function wordsBetween(text: string, from: number, to: number): Word[] {
  return wordsOf(text.slice(from, to)).map((w) => ({ text: w.text, start: w.start + from, end: w.end + from }));
}

/** A code block's lines, trailing spaces and blank lines at either end dropped. */
function codeLines(text: string, from: number, to: number): Piece[] {
  const lines: Piece[] = [];
  for (let at = from; at < to; ) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 || nl > to ? to : nl;
    lines.push({ words: wordsBetween(text, at, end), code: text.slice(at, end).trimEnd() });
    at = end + 1;
  }
  while (lines.length > 0 && lines[0].words.length === 0) lines.shift();
  while (lines.length > 0 && lines[lines.length - 1].words.length === 0) lines.pop();
  return lines;
}

/** Lines of code as one piece; runs of blank lines become one. */
function joinLines(lines: Piece[]): Piece {
  return {
    words: lines.flatMap((l) => l.words),
    code: lines
      .map((l) => l.code)
      .join('\n')
      .replace(/\n{3,}/g, '\n\n'),
  };
}

/** A passage's text: prose pieces joined by spaces, a code piece on lines of its own. */
function pieceText(pieces: Piece[]): string {
  let out = '';
  pieces.forEach((p, i) => {
    if (i > 0) out += p.code !== null || pieces[i - 1].code !== null ? '\n' : ' ';
    out += p.code ?? p.words.map((w) => w.text).join(' ');
  });
  return out;
}

/**
 * Split `text` into disjoint, ordered blocks of at most `maxWords` words, packing whole sentences
 * greedily; together the blocks hold every word of `text` exactly once. With `fits`, a block must
 * also satisfy it (the passage encoder's token budget: a passage longer than the encoder reads is
 * clipped, and the clipped words are invisible to dense retrieval); a sentence that does not fit
 * alone is cut at the most words that do (at least one word per block, so splitting always ends).
 *
 * A fenced code block (fences.ts) is never cut: it joins the block being packed when it fits
 * there, else it opens the next block, keeping its line breaks. A code block longer than a whole
 * passage is split at line boundaries only, into passages of its own (a single line longer than a
 * passage is cut at words, as a long sentence is): every passage stays within the limit, so the
 * encoder never clips code, and each passage holds whole lines.
 */
export function splitPassages(text: string, maxWords: number, fits?: (blockText: string) => boolean): TextBlock[] {
  if (!Number.isInteger(maxWords) || maxWords < 1) {
    throw new RangeError(`maxWords must be an integer >= 1, got ${maxWords}`);
  }
  const blocks: TextBlock[] = [];
  const count = (pieces: Piece[]): number => pieces.reduce((n, p) => n + p.words.length, 0);
  const ok = (pieces: Piece[]): boolean => count(pieces) <= maxWords && (fits === undefined || fits(pieceText(pieces)));
  const emit = (pieces: Piece[]): void => {
    const words = pieces.flatMap((p) => p.words);
    if (words.length === 0) return;
    blocks.push({ text: pieceText(pieces), wordCount: words.length, start: words[0].start, end: words[words.length - 1].end });
  };
  /** Cut a sentence (or a line of code) into blocks that each hold as many words as fit (binary search per block). */
  const cut = (words: Word[]): void => {
    let at = 0;
    while (at < words.length) {
      let lo = at + 1; // one word always goes in
      let hi = Math.min(words.length, at + maxWords);
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (ok([{ words: words.slice(at, mid), code: null }])) lo = mid;
        else hi = mid - 1;
      }
      emit([{ words: words.slice(at, lo), code: null }]);
      at = lo;
    }
  };
  /** A code block too long for one passage: runs of whole lines, each as many as fit. */
  const splitCode = (lines: Piece[]): void => {
    let run: Piece[] = [];
    for (const line of lines) {
      if (run.length > 0 && ok([joinLines([...run, line])])) {
        run.push(line);
        continue;
      }
      if (run.length > 0) emit([joinLines(run)]);
      run = [];
      if (ok([line])) run = [line];
      else cut(line.words);
    }
    if (run.length > 0) emit([joinLines(run)]);
  };

  let block: Piece[] = [];
  const place = (piece: Piece, lines?: Piece[]): void => {
    if (block.length > 0 && ok([...block, piece])) {
      block.push(piece);
      return;
    }
    emit(block);
    block = [];
    if (ok([piece])) block = [piece];
    else if (lines) splitCode(lines);
    else cut(piece.words); // a sentence too long for any block: cut on its own
  };
  const prose = (from: number, to: number): void => {
    const words = wordsBetween(text, from, to);
    for (const [a, b] of sentencesOf(text, words)) place({ words: words.slice(a, b), code: null });
  };
  let at = 0;
  for (const fenced of findFences(text)) {
    prose(at, fenced.start);
    const lines = codeLines(text, fenced.codeStart, fenced.codeEnd);
    if (lines.length > 0) place(joinLines(lines), lines);
    at = fenced.end;
  }
  prose(at, text.length);
  emit(block);
  return blocks;
}
