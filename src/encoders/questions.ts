/**
 * Question encoding for the API: an LRU of question vectors and micro-batching across concurrent
 * requests, per model and role. Concurrent questions wait while the model runs and then go
 * together as one run (at most `maxBatch`); identical questions in flight share one slot; a
 * question asked again is answered from the cache without the model. Both are bounded: beyond
 * `maxWaiting` questions waiting, a question is refused with OVERLOADED (HTTP 503) rather than
 * queued without limit.
 */
import { LRUCache } from 'lru-cache';
import { DomainError, ErrorCode } from '../errors';
import type { EncodeStats, Encoder, EncoderRole } from './types';

export interface QuestionQueueOptions {
  /** Most questions in one model run. */
  maxBatch: number;
  /** Most distinct questions waiting for the model; more are refused (OVERLOADED). */
  maxWaiting: number;
  /** Question vectors kept per model and role (0: none). */
  cacheEntries: number;
}

/**
 * 16 per run: the encoders' own forward batch (bench:embed). 256 waiting is 16 runs, tens of ms of
 * queue on one core, 1 MB of vectors. 1000 cached 512-d vectors are 2 MB.
 */
export const DEFAULT_QUESTION_QUEUE: QuestionQueueOptions = { maxBatch: 16, maxWaiting: 256, cacheEntries: 1000 };

export interface EncodedQuestion {
  vector: Float32Array;
  stats: EncodeStats;
}

interface Waiting {
  text: string;
  resolve: (q: EncodedQuestion) => void;
  reject: (e: unknown) => void;
}

export class QuestionEncoder {
  private readonly cache?: LRUCache<string, EncodedQuestion>;
  /** Distinct questions not yet handed to the model, oldest first. */
  private readonly waiting: Waiting[] = [];
  /** Questions waiting or in a run, so a repeat in flight joins it. */
  private readonly inFlight = new Map<string, Promise<EncodedQuestion>>();
  private running = false;
  private scheduled = false;

  constructor(
    readonly encoder: Encoder,
    readonly role: EncoderRole,
    readonly options: QuestionQueueOptions = DEFAULT_QUESTION_QUEUE,
  ) {
    if (options.cacheEntries > 0) this.cache = new LRUCache({ max: options.cacheEntries });
  }

  /** Questions waiting for the model now (for tests and metrics). */
  get queued(): number {
    return this.waiting.length;
  }

  /** The vector is shared with other callers and the cache: read it, never write it. */
  encode(text: string): Promise<EncodedQuestion> {
    const cached = this.cache?.get(text);
    if (cached) return Promise.resolve(cached);
    const joined = this.inFlight.get(text);
    if (joined) return joined;
    if (this.waiting.length >= this.options.maxWaiting) {
      return Promise.reject(
        new DomainError(ErrorCode.OVERLOADED, `the server is encoding ${this.waiting.length} questions already; retry shortly`, {
          details: { retryAfterS: 1 },
        }),
      );
    }
    const promise = new Promise<EncodedQuestion>((resolve, reject) => this.waiting.push({ text, resolve, reject }));
    this.inFlight.set(text, promise);
    this.schedule();
    return promise;
  }

  /**
   * Runs on the next turn of the event loop (setImmediate): the questions whose requests arrived
   * in the same poll — a fraction of a millisecond — go together. While a run is on, new ones wait
   * for it and go next, so under load batches fill up on their own.
   */
  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.running || this.waiting.length === 0) return;
    this.running = true;
    const batch = this.waiting.splice(0, this.options.maxBatch);
    try {
      const texts = batch.map((w) => w.text);
      const { vectors } = await this.encoder.encode(texts, this.role, { batchSize: this.options.maxBatch });
      const limit = this.encoder.maxTokens(this.role);
      batch.forEach((w, i) => {
        const count = this.encoder.countTokens(w.text, this.role);
        const encoded = { vector: vectors[i], stats: { texts: 1, tokens: Math.min(count, limit), truncated: count > limit ? 1 : 0 } };
        this.cache?.set(w.text, encoded);
        this.inFlight.delete(w.text);
        w.resolve(encoded);
      });
    } catch (error) {
      for (const w of batch) {
        this.inFlight.delete(w.text);
        w.reject(error);
      }
    } finally {
      this.running = false;
      if (this.waiting.length > 0) this.schedule();
    }
  }
}

const byEncoder = new WeakMap<Encoder, Map<EncoderRole, QuestionEncoder>>();

/** The process's question encoder for this model and role, so every request shares its batches and cache. */
export function questionEncoderFor(encoder: Encoder, role: EncoderRole, options: QuestionQueueOptions = DEFAULT_QUESTION_QUEUE): QuestionEncoder {
  let roles = byEncoder.get(encoder);
  if (!roles) byEncoder.set(encoder, (roles = new Map()));
  let q = roles.get(role);
  if (!q) roles.set(role, (q = new QuestionEncoder(encoder, role, options)));
  return q;
}
