import { BulkThreadEncoder } from './bulk-thread';
import { TransformerEncoder } from './transformer/encoder';
import { DEFAULT_MODEL, defaultEncoderSpec, type EncoderSpec } from './spec';
import { DEFAULT_QUESTION_QUEUE, questionEncoderFor, type EncodedQuestion, type QuestionQueueOptions } from './questions';
import { ENCODER_ROLES, EncoderError, type EncodeStats, type Encoder, type EncoderRole } from './types';
import { UseLiteEncoder } from './use-lite/encoder';

export interface EncoderSetOptions {
  cacheDir?: string;
  /** Intra-op threads for corpus embedding (0: all cores). */
  threads?: number;
  /** Intra-op threads for questions (default DEFAULT_QUERY_THREADS). */
  queryThreads?: number;
  /** Micro-batching and cache of question encodes (DEFAULT_QUESTION_QUEUE). */
  questions?: QuestionQueueOptions;
  /** Encode documents and passages in a worker thread (a server: BulkThreadEncoder); questions stay on this thread. */
  bulkThread?: boolean;
}

/** Loads one model: 'use-lite' (the default) or a custom model folder. */
export async function loadEncoder(source: string, options: EncoderSetOptions = {}): Promise<Encoder> {
  if (options.bulkThread) {
    const onMain = await loadEncoder(source, { ...options, bulkThread: false });
    return new BulkThreadEncoder(onMain, source, { cacheDir: options.cacheDir, threads: options.threads, queryThreads: options.queryThreads });
  }
  return source === DEFAULT_MODEL
    ? UseLiteEncoder.load({ cacheDir: options.cacheDir, threads: options.threads, queryThreads: options.queryThreads })
    : TransformerEncoder.load(source, { threads: options.threads, queryThreads: options.queryThreads });
}

/**
 * The four DHR encoders. A model named for several roles is loaded once; a question is
 * encoded once per distinct question model.
 */
export class EncoderSet {
  private constructor(
    readonly byRole: Readonly<Record<EncoderRole, Encoder>>,
    private readonly questions: QuestionQueueOptions,
  ) {}

  static async load(spec: EncoderSpec = defaultEncoderSpec(), options: EncoderSetOptions = {}): Promise<EncoderSet> {
    const loaded = new Map<string, Promise<Encoder>>();
    const load = (source: string): Promise<Encoder> => {
      const known = loaded.get(source);
      if (known) return known;
      const encoder = loadEncoder(source, options);
      loaded.set(source, encoder);
      return encoder;
    };
    const entries = await Promise.all(ENCODER_ROLES.map(async (role) => [role, await load(spec[role])] as const));
    return EncoderSet.of(Object.fromEntries(entries) as Record<EncoderRole, Encoder>, options.questions);
  }

  /** A set from encoders already loaded (tests, custom wiring); checks that paired roles agree. */
  static of(byRole: Record<EncoderRole, Encoder>, questions: QuestionQueueOptions = DEFAULT_QUESTION_QUEUE): EncoderSet {
    for (const [question, target] of [
      ['questionDocument', 'document'],
      ['questionPassage', 'passage'],
    ] as const) {
      const q = byRole[question];
      const t = byRole[target];
      if (q.dimension !== t.dimension) {
        throw new EncoderError(
          q.name,
          `serves ${question} with dimension ${q.dimension}, but the ${target} model "${t.name}" has dimension ${t.dimension}; ` +
            'inner products need the same space',
        );
      }
    }
    return new EncoderSet(byRole, questions);
  }

  distinct(): Encoder[] {
    return [...new Set(Object.values(this.byRole))];
  }

  /**
   * E_Q^φ(q) and E_Q^ψ(q): one forward pass when both roles share a model, batched with concurrent
   * questions and cached (questions.ts). The vectors are shared: read them, never write them.
   */
  async encodeQuestion(question: string): Promise<{ document: Float32Array; passage: Float32Array; stats: EncodeStats[] }> {
    const qd = this.byRole.questionDocument;
    const qp = this.byRole.questionPassage;
    const forDocument = questionEncoderFor(qd, 'questionDocument', this.questions).encode(question);
    const forPassage = qp === qd ? forDocument : questionEncoderFor(qp, 'questionPassage', this.questions).encode(question);
    const [d, p] = await Promise.all([forDocument, forPassage]);
    return { document: d.vector, passage: p.vector, stats: qp === qd ? [d.stats] : [d.stats, p.stats] };
  }

  /** E_Q(q) for one question role alone (the other's vector came from the client), batched and cached as above. */
  encodeQuestionIn(role: 'questionDocument' | 'questionPassage', question: string): Promise<EncodedQuestion> {
    return questionEncoderFor(this.byRole[role], role, this.questions).encode(question);
  }

  async close(): Promise<void> {
    await Promise.all(this.distinct().map((e) => e.close()));
  }
}
