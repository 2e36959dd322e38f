import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { search } from './search';
import type { IterativeScan, SearchResult } from './types';
import { validateRetrieveArgs, type RetrieveArgs } from './validate';

export interface RetrieveOptions {
  efSearch?: number;
  efFactor?: number;
  iterativeScan?: IterativeScan;
  maxScanTuples?: number;
  exact?: boolean;
}

export interface Retrieval extends SearchResult {
  args: RetrieveArgs;
  /** The passage model's name (the document model's for DOCUMENTS). */
  model: string;
  timings: { encodeMs: number; searchMs: number; totalMs: number };
}

const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

/**
 * DHR retrieval: validate, encode the question once per distinct question model (LEXICAL needs
 * no encoder), then one SQL statement for the mode.
 */
export async function retrieve(
  db: Database,
  targets: EmbeddingTargets | undefined,
  rawArgs: RetrieveArgs,
  options: RetrieveOptions = {},
): Promise<Retrieval> {
  const started = process.hrtime.bigint();
  const args = validateRetrieveArgs(rawArgs);
  const needsVectors = args.mode !== 'LEXICAL';
  if (needsVectors && !targets) throw new Error('retrieval needs encoders; this server runs without them');
  const question = needsVectors && targets ? await targets.encoders.encodeQuestion(args.question) : undefined;
  const encodeMs = ms(started);
  const searchStarted = process.hrtime.bigint();
  const result = await search(db, {
    mode: args.mode,
    documentModel: targets?.document ?? { id: 0, dimension: 1 },
    passageModel: targets?.passage ?? { id: 0, dimension: 1 },
    questionForDocuments: question?.document,
    questionForPassages: question?.passage,
    questionText: args.question,
    k1: args.k1,
    k2: args.k2,
    lambda: args.lambda,
    filter: args.filter,
    exact: options.exact,
    efSearch: options.efSearch,
    efFactor: options.efFactor,
    iterativeScan: options.iterativeScan,
    maxScanTuples: options.maxScanTuples,
  });
  const model = args.mode === 'LEXICAL' ? 'postgres-fts' : args.mode === 'DOCUMENTS' ? targets!.document.name : targets!.passage.name;
  return { ...result, args, model, timings: { encodeMs, searchMs: ms(searchStarted), totalMs: ms(started) } };
}
