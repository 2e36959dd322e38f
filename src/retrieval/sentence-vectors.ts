import { createHash } from 'node:crypto';
import { setImmediate as turn } from 'node:timers/promises';
import type { StoredSpans } from '../store/sentence-embeddings';
import { splitSentences } from './answer';
import { ANSWER_TYPES, type AnswerType } from './answer-types';
import { SPAN_TAGGER, tagSentence, type TypedSpan } from './answer-spans';

/**
 * Which sentences of a passage get a stored vector (encoded with the passages, read by answer
 * highlights), and the hash that ties stored vectors to the split they came from. The writer
 * (pipeline/encode.ts) and the reader (highlight.ts) share this, so both split with the same
 * function, splitSentences.
 */

/**
 * At most this many sentences per passage are encoded with the passages; a highlight encodes the
 * rest of a longer passage at query time, as before. On the Factbook's 38,877 word-split passages
 * (100 words) the most is 12 sentences (p99: 6), so the cap bounds pathological passages (a list
 * of one-word lines, a large maxWords) without cutting any ordinary one.
 */
export const SENTENCE_VECTOR_CAP = 16;

/**
 * Sentences per model run: they are a fraction of a passage's length, so a run of 64 holds about
 * as many tokens as the encoders' default batch of passages.
 */
export const SENTENCE_BATCH = 64;

/** A hash of sentence texts in order (sha256, 32 hex digits): equal hashes, equal split. */
export function splitHash(texts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const text of texts) hash.update(text).update('\u0000');
  return hash.digest('hex').slice(0, 32);
}

/** The sentences of a passage that get stored vectors, and their hash. */
export function sentencesToStore(text: string): { texts: string[]; hash: string } {
  const texts = splitSentences(text)
    .slice(0, SENTENCE_VECTOR_CAP)
    .map((s) => s.text);
  return { texts, hash: splitHash(texts) };
}

/**
 * The typed spans of stored sentences (migration 0019), tagged when they are encoded so a typed
 * highlight reads them instead of running compromise at query time. Tagging costs about a
 * millisecond a sentence, on the thread that writes the batch: it yields to the event loop between
 * passages, so a server's requests interleave with its embedding jobs.
 */
export async function spansToStore(passages: readonly (readonly string[])[]): Promise<StoredSpans[]> {
  const out: StoredSpans[] = [];
  for (const texts of passages) {
    out.push({ v: SPAN_TAGGER, s: texts.map((t) => tagSentence(t).flatMap((sp) => [sp.start, sp.end, ANSWER_TYPES.indexOf(sp.type)])) });
    await turn();
  }
  return out;
}

/** Stored spans back as TypedSpan lists (the reader's half of spansToStore). */
export function storedTypedSpans(flat: readonly number[]): TypedSpan[] {
  const out: TypedSpan[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) out.push({ start: flat[i], end: flat[i + 1], type: ANSWER_TYPES[flat[i + 2]] as AnswerType });
  return out;
}
