import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { Encoder, EncoderRole } from '../encoders/types';
import type { Database, Queryable } from '../store/db';
import { sentenceSimilarities, type SentenceSimilarities } from '../store/sentence-embeddings';
import { pickAnswer, splitSentences, type Answer } from './answer';
import { SENTENCE_BATCH, splitHash, storedTypedSpans } from './sentence-vectors';
import { SPAN_TAGGER, typedSpans, type TypedSpan } from './answer-spans';

/**
 * Sentence and question vectors kept per encoder, so a popular passage is encoded once per
 * process: 10,000 vectors of 512 floats are about 20 MB.
 */
const CACHE_ENTRIES = 10_000;

/**
 * One encoder in one role, batched and cached: the answers of one retrieval's passages resolve in
 * the same tick, so their sentences go to the model as one batch (DataLoader), and vectors stay in
 * an LRU across requests (a passage's sentences do not change between questions).
 */
function vectorLoader(encoder: Encoder, role: EncoderRole): DataLoader<string, Float32Array> {
  return new DataLoader<string, Float32Array>(async (texts) => (await encoder.encode(texts, role, { batchSize: SENTENCE_BATCH })).vectors, {
    cacheMap: new LRUCache<string, Promise<Float32Array>>({ max: CACHE_ENTRIES }),
    maxBatchSize: 256,
  });
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** A passage's stored sentence vectors of one model, scored against one question vector. */
export interface SentenceKey {
  modelId: number;
  passageId: number;
  documentId: number;
  question: Float32Array;
}

export type StoredSentenceLoader = DataLoader<SentenceKey, SentenceSimilarities | null>;

/**
 * Reads the stored sentence similarities of every passage asked for in the same turn of the event
 * loop (a retrieval's answer fields) in one statement per model and question vector — normally
 * one. Scheduled with setImmediate rather than DataLoader's default (after the current promise
 * jobs), so answer fields that reach it a few awaits apart still share the statement. Uncached:
 * one per request (graphql/loaders.ts), each key asked once.
 */
export function storedSentenceLoader(db: Queryable & Pick<Partial<Database>, 'vectorParam'>, options: { spans?: boolean } = {}): StoredSentenceLoader {
  // spans false: the stored spans are not read (sentences tagged at query time): bench:answer's baseline.
  const tagger = options.spans === false ? 0 : SPAN_TAGGER;
  return new DataLoader<SentenceKey, SentenceSimilarities | null>(
    async (keys) => {
      const groups = new Map<number, Map<Float32Array, SentenceKey[]>>();
      for (const k of keys) {
        const byQuestion = groups.get(k.modelId) ?? groups.set(k.modelId, new Map()).get(k.modelId)!;
        (byQuestion.get(k.question) ?? byQuestion.set(k.question, []).get(k.question)!).push(k);
      }
      const found = new Map<SentenceKey, SentenceSimilarities>();
      for (const [modelId, byQuestion] of groups) {
        for (const [question, group] of byQuestion) {
          const rows = await sentenceSimilarities(db, modelId, question, group, tagger);
          for (const k of group) {
            const row = rows.get(k.passageId);
            if (row) found.set(k, row);
          }
        }
      }
      return keys.map((k) => found.get(k) ?? null);
    },
    { cache: false, batchScheduleFn: (run) => setImmediate(run) },
  );
}

/** Where a passage's stored sentence vectors are read from, for highlight(). */
export interface StoredSentences {
  loader: StoredSentenceLoader;
  /** The stored model of the passage encoder (its sentence vectors pair with the question encoder's vectors). */
  modelId: number;
  passageId: number;
  documentId: number;
}

/**
 * Answer highlights with the question–passage encoders (E_Q^ψ, E_P^ψ) when present; lexical
 * overlap alone without them (a server without encoders, or a model whose question and passage
 * spaces differ in dimension cannot happen: EncoderSet refuses it).
 */
export class AnswerHighlighter {
  private readonly questions?: DataLoader<string, Float32Array>;
  private readonly sentences?: DataLoader<string, Float32Array>;

  constructor(encoders?: { question: Encoder; passage: Encoder }) {
    if (encoders) {
      this.questions = vectorLoader(encoders.question, 'questionPassage');
      this.sentences = vectorLoader(encoders.passage, 'passage');
    }
  }

  /**
   * questionVector: E_Q^ψ(question) when the caller has it already (the retrieval encoded the
   * question with the same encoder), so only the sentences go to the model. stored: where the
   * passage's sentence vectors were stored when it was embedded; the sentences they cover (the
   * first ones, under the same split: same hash) cost an inner product each, the rest — all of
   * them for a passage without stored vectors, or split otherwise since — are encoded.
   */
  async highlight(question: string, text: string, questionVector?: Float32Array, stored?: StoredSentences): Promise<Answer | null> {
    if (!this.questions || !this.sentences) return pickAnswer(question, text);
    const texts = splitSentences(text).map((s) => s.text);
    if (texts.length === 0) return null;
    let similarities: number[];
    if (stored) {
      const q = questionVector ?? (await this.questions.load(question));
      const row = await stored.loader.load({ modelId: stored.modelId, passageId: stored.passageId, documentId: stored.documentId, question: q });
      const covered = row?.similarities.length ?? 0;
      const same = row !== null && covered <= texts.length && row.splitHash === splitHash(texts.slice(0, covered));
      const known = same ? row.similarities : [];
      similarities = [...known, ...(await this.encoded(q, texts.slice(known.length)))];
      // The stored typed spans of the same sentences (same split): no tagging at query time.
      if (same && row.spans) return pickAnswer(question, text, similarities, { tagger: storedTagger(texts, row.spans) });
    } else {
      const [q, vectors] = await Promise.all([questionVector ?? this.questions.load(question), this.sentences.loadMany(texts)]);
      similarities = vectors.map((v) => {
        if (v instanceof Error) throw v;
        return dot(q, v);
      });
    }
    return pickAnswer(question, text, similarities);
  }

  private async encoded(q: Float32Array, texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    return (await this.sentences!.loadMany(texts)).map((v) => {
      if (v instanceof Error) throw v;
      return dot(q, v);
    });
  }
}

/**
 * A tagger that answers from stored spans for the stored sentences (by text: a sentence's spans
 * depend on its text alone) and tags any other sentence (past the stored cap) as before.
 */
function storedTagger(texts: readonly string[], stored: readonly number[][]): (sentence: string) => TypedSpan[] {
  const known = new Map<string, readonly number[]>();
  stored.forEach((flat, i) => known.set(texts[i], flat));
  return (sentence) => {
    const flat = known.get(sentence);
    return flat ? storedTypedSpans(flat) : typedSpans(sentence);
  };
}

const byEncoders = new WeakMap<Encoder, WeakMap<Encoder, AnswerHighlighter>>();
const lexicalOnly = new AnswerHighlighter();

/** The process's highlighter for these encoders (so their caches are shared by every request). */
export function highlighterFor(encoders?: { question: Encoder; passage: Encoder }): AnswerHighlighter {
  if (!encoders) return lexicalOnly;
  let inner = byEncoders.get(encoders.question);
  if (!inner) byEncoders.set(encoders.question, (inner = new WeakMap()));
  let h = inner.get(encoders.passage);
  if (!h) inner.set(encoders.passage, (h = new AnswerHighlighter(encoders)));
  return h;
}
