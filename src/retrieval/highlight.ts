import DataLoader from 'dataloader';
import { LRUCache } from 'lru-cache';
import type { Encoder, EncoderRole } from '../encoders/types';
import { pickAnswer, splitSentences, type Answer } from './answer';

/**
 * Sentence and question vectors kept per encoder, so a popular passage is encoded once per
 * process: 10,000 vectors of 512 floats are about 20 MB.
 */
const CACHE_ENTRIES = 10_000;
const SENTENCE_BATCH = 64;

/**
 * One encoder in one role, batched and cached: the answers of one retrieval's passages resolve in
 * the same tick, so their sentences go to the model as one batch (DataLoader), and vectors stay in
 * an LRU across requests (a passage's sentences do not change between questions).
 */
function vectorLoader(encoder: Encoder, role: EncoderRole): DataLoader<string, Float32Array> {
  return new DataLoader<string, Float32Array>(
    // Sentences are a fraction of a passage's length, so a model batch of SENTENCE_BATCH of them
    // holds about as many tokens as the encoders' default batch of passages: one model run for
    // a retrieval's top passages instead of several.
    async (texts) => (await encoder.encode(texts, role, { batchSize: SENTENCE_BATCH })).vectors,
    { cacheMap: new LRUCache<string, Promise<Float32Array>>({ max: CACHE_ENTRIES }), maxBatchSize: 256 },
  );
}

const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

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
   * question with the same encoder), so only the sentences go to the model.
   */
  async highlight(question: string, text: string, questionVector?: Float32Array): Promise<Answer | null> {
    if (!this.questions || !this.sentences) return pickAnswer(question, text);
    const sentences = splitSentences(text);
    if (sentences.length === 0) return null;
    const [q, vectors] = await Promise.all([
      questionVector ?? this.questions.load(question),
      this.sentences.loadMany(sentences.map((s) => s.text)),
    ]);
    const similarities = vectors.map((v) => {
      if (v instanceof Error) throw v;
      return dot(q, v);
    });
    return pickAnswer(question, text, similarities);
  }
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
