/**
 * The encoder contract. DHR uses four encoders (paper §3): question→document (E_Q^φ), document
 * (E_D^φ), question→passage (E_Q^ψ) and passage (E_P^ψ); each role may be served by another model.
 */
export type EncoderRole = 'questionDocument' | 'document' | 'questionPassage' | 'passage';

export const ENCODER_ROLES: readonly EncoderRole[] = ['questionDocument', 'document', 'questionPassage', 'passage'];

export const isQuestionRole = (role: EncoderRole): boolean => role === 'questionDocument' || role === 'questionPassage';

/** Token budget per kind of text (DHR: documents 512, passages 280, questions 80). */
export interface MaxTokens {
  question: number;
  document: number;
  passage: number;
}

export const DEFAULT_MAX_TOKENS: MaxTokens = { question: 80, document: 512, passage: 280 };

export function maxTokensFor(limits: MaxTokens, role: EncoderRole): number {
  if (isQuestionRole(role)) return limits.question;
  return role === 'document' ? limits.document : limits.passage;
}

/** What one encode call did, so truncation is reported rather than silent. */
export interface EncodeStats {
  texts: number;
  /** Tokens fed to the model, after truncation. */
  tokens: number;
  /** Texts whose token count exceeded the limit and were cut. */
  truncated: number;
}

export interface EncodeResult {
  /** One vector per input text, in input order; unit length when the model normalizes. */
  vectors: Float32Array[];
  stats: EncodeStats;
}

export interface Encoder {
  /** Registry name, e.g. "use-lite". */
  readonly name: string;
  /** 'external': vectors come from the client, the model encodes nothing (encoders/external.ts). */
  readonly runtime: 'onnxruntime-node' | 'external';
  readonly dimension: number;
  /** sha256 over the model's files: identifies the weights an embedding came from. */
  readonly checksum: string;
  /** Where the model loads from ('use-lite' or a model folder), so another process can load it by name. */
  readonly source?: string;
  /** Whether vectors are L2-normalized (inner product = cosine). */
  readonly normalized: boolean;
  /** The effective limit for a role: the configured budget capped by what the model accepts. */
  maxTokens(role: EncoderRole): number;
  /**
   * Tokens the model would read for `text` in `role` before truncation (prefixes and special tokens
   * included), so ingest can split passages to fit the budget instead of clipping them.
   */
  countTokens(text: string, role: EncoderRole): number;
  encode(texts: readonly string[], role: EncoderRole, options?: { batchSize?: number }): Promise<EncodeResult>;
  close(): Promise<void>;
}

/** A model that cannot be loaded or used; the message names the model and the file. */
export class EncoderError extends Error {
  constructor(
    readonly model: string,
    problem: string,
  ) {
    super(`model "${model}": ${problem}`);
    this.name = 'EncoderError';
  }
}

/**
 * Question path: one thread. bench:encoder (docs/benchmarks.md): a single question is too small to
 * split across threads, and the API's other requests and PostgreSQL want the other cores.
 */
export const DEFAULT_QUERY_THREADS = 1;

export interface OnnxSessionOptions {
  /** onnxruntime intra-op threads of the bulk (corpus embedding) session; 0 = all cores. */
  intraOpThreads?: number;
  /** Intra-op threads of the question session (default DEFAULT_QUERY_THREADS in onnx.ts). */
  queryThreads?: number;
  /** Let idle onnxruntime threads spin (default false: spinning burns a core between requests). */
  allowSpinning?: boolean;
}
