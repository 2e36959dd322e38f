import { adaptQuestion, type QueryAdapter } from '../adapters/linear';
import { isExternal } from '../encoders/external';
import type { EncoderSet } from '../encoders/set';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { DEFAULT_MODE, MODES, TEXT_ONLY_MODE, type ModeSpec, type RetrievalMode } from './modes';
import { applyCutoffs } from './cutoff';
import { QUESTION_VECTOR_ARGUMENTS, questionVectors } from './question-vectors';
import { questionWithoutNames } from './question-names';
import { search } from './search';
import type { RowFetch } from './statements/rows';
import { resolveRanking, type Ranking, type RankingLayer, type RankingName, type RankingSource } from './parameters';
import type { RetrievalFilter, SearchExecution, SearchResult } from './types';
import { RetrievalInputError, validateRetrieveArgs, type RetrieveArgs } from './validate';

/** A corpus's retrieval settings: per mode, the ranking parameters it sets. */
export type CorpusSettings = Partial<Record<RetrievalMode, RankingLayer>>;

export interface RetrieveOptions extends SearchExecution {
  /** The corpus's stored settings per mode (retrievalSettings), for what the question leaves out. */
  corpus?: CorpusSettings;
  /** The server's environment (HYBRID_ALPHA, PER_DOCUMENT), below the corpus's settings. */
  environment?: RankingLayer;
  /** Columns of the ranked rows to return in the same statement (the API: what its selection reads). */
  rows?: RowFetch;
  /** Passages left out of the ranking (SearchInput.withoutPassages): a tune's, never a client's. */
  withoutPassages?: readonly number[];
}

export interface Retrieval extends SearchResult {
  /** The arguments as applied: the mode, and every ranking parameter resolved (perDocument: the bound that applied). */
  args: Omit<RetrieveArgs, RankingName> & Omit<Ranking, 'perDocument'> & { mode: RetrievalMode; perDocument?: number };
  /** Per ranking parameter, the value resolved and where it came from (request, corpus, environment, mode). */
  parameters: { name: RankingName; value: Ranking[RankingName]; source: RankingSource }[];
  /** The passage model's name (the document model's for DOCUMENTS; `bm25` for the lexical modes). */
  model: string;
  /** The query-side adapter applied to the question vectors, if any. */
  adapter: string | null;
  /** What the client should know about this answer (fallbacks, words BM25 could not use). */
  warnings: string[];
  timings: { encodeMs: number; searchMs: number; totalMs: number };
  /**
   * E_Q^ψ(q) when the mode encoded the question (absent for the lexical modes): answer highlights
   * reuse it instead of encoding the question a second time.
   */
  questionForPassages?: Float32Array;
}

const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

/**
 * Retrieval: validate, pick the mode, encode the question once per distinct question model the
 * mode needs, then one SQL statement for the mode.
 */
export async function retrieve(db: Database, targets: EmbeddingTargets | undefined, rawArgs: RetrieveArgs, options: RetrieveOptions = {}): Promise<Retrieval> {
  const started = process.hrtime.bigint();
  const valid = validateRetrieveArgs(rawArgs);
  const warnings: string[] = [];
  let mode = valid.mode;
  if (mode === undefined) {
    mode = targets ? DEFAULT_MODE : TEXT_ONLY_MODE;
    if (!targets) warnings.push(`this server runs without encoders, so the default mode is ${TEXT_ONLY_MODE}`);
  }
  const spec: ModeSpec = MODES[mode];
  const needsVectors = spec.needs.documentVector || spec.needs.passageVector;
  const vectorGiven = QUESTION_VECTOR_ARGUMENTS.find((n) => valid[n] !== undefined);
  if (vectorGiven && !needsVectors) {
    throw new RetrievalInputError(
      vectorGiven,
      `mode ${mode} reads no vectors, so ${vectorGiven} has nothing to meet: give question for ${mode}, or use a dense or hybrid mode with ${vectorGiven}`,
    );
  }
  if (needsVectors && !targets) {
    throw new RetrievalInputError('mode', `mode ${mode} needs encoders, and this server runs without them; use ${TEXT_ONLY_MODE} or LEXICAL_DOCUMENTS`);
  }
  const { question: text, questionVector, questionDocumentVector, questionPassageVector, k1, k2, mode: _asked, minScore, autocut, filter, ...request } = valid;
  const ranking = resolveRanking(spec.defaults, { request, corpus: options.corpus?.[mode], environment: options.environment });
  const perDocument = ranking.values.perDocument;
  const args = {
    question: text,
    k1,
    k2,
    minScore,
    autocut,
    filter,
    mode,
    ...ranking.values,
    // the bound that applies, if any: k2 or more bounds nothing, and a documents-only mode returns no passages
    perDocument: perDocument !== null && perDocument < k2 && !spec.documentsOnly ? perDocument : undefined,
  };
  // The name-free question (titleLinkDense) is looked up while the question is encoded; marked
  // handled at once so that a failed encode does not leave it rejected unobserved (awaited below).
  const nameFree = nameFreeQuestion(db, mode, ranking.values, { text, filter, encoders: vectorGiven ? undefined : targets?.encoders });
  nameFree.catch(() => undefined);
  // The client's own vectors where given (bring your own vectors), else the text encoded.
  const encoded =
    needsVectors && targets
      ? await questionVectors(mode, spec.needs, targets.encoders, { question: text, questionVector, questionDocumentVector, questionPassageVector })
      : undefined;
  // The adapter maps question vectors only; stored vectors and the SQL are the same as without it.
  const maps = targets?.adapter?.maps;
  const applies = (spec.needs.documentVector && maps?.document) || (spec.needs.passageVector && maps?.passage);
  const adapter = encoded && applies ? targets!.adapter : undefined;
  const question = encoded && adapter ? adaptQuestion(adapter, encoded) : encoded;
  if (needsVectors && targets?.adapterWarning) warnings.push(targets.adapterWarning);
  const attribute = await attributeVector(await nameFree, ranking.values.titleLinkDense, { encoders: targets?.encoders, adapter, whole: question?.passage });
  const encodeMs = ms(started);
  const searchStarted = process.hrtime.bigint();
  const { corpus: _corpus, environment: _environment, ...execution } = options;
  const result = await search(db, {
    ...execution,
    mode,
    // A mode that reads no vectors of a level never looks at its model.
    documentModel: targets?.document ?? { id: 0, dimension: 1 },
    passageModel: targets?.passage ?? { id: 0, dimension: 1 },
    questionForDocuments: spec.needs.documentVector ? question?.document : undefined,
    questionForPassages: spec.needs.passageVector ? question?.passage : undefined,
    questionForAttribute: attribute,
    questionText: args.question ?? '',
    ...ranking.values,
    k1: args.k1,
    k2: args.k2,
    perDocument: args.perDocument,
    filter: args.filter,
  });
  if (spec.needs.text && args.question === undefined) {
    warnings.push('no question text: BM25 had nothing to read, so this hybrid mode ranked by vectors alone; give question too for its lexical side');
  } else if (spec.needs.text && result.questionTerms === 0) {
    warnings.push(
      needsVectors
        ? 'the question has no words BM25 can use (only stop words or punctuation): ranked by vectors alone'
        : 'the question has no words BM25 can use (only stop words or punctuation): nothing to rank',
    );
  }
  // The cut-offs apply to the final ranking: the passages, or the documents of a documents-only mode.
  if (args.minScore !== undefined || args.autocut !== undefined) {
    const cutoffs = { minScore: args.minScore, autocut: args.autocut };
    if (spec.documentsOnly) result.documents = applyCutoffs(result.documents, cutoffs);
    else result.passages = applyCutoffs(result.passages, cutoffs);
  }
  const model = !needsVectors ? 'bm25' : mode === 'DOCUMENTS' ? targets!.document.name : targets!.passage.name;
  // Highlights reuse the encoder's own question vector (before any adapter): they score sentences with E_P^ψ.
  const parameters = (Object.keys(ranking.values) as RankingName[]).map((name) => ({ name, value: ranking.values[name], source: ranking.sources[name] }));
  return {
    ...result,
    args,
    parameters,
    model,
    adapter: adapter?.name ?? null,
    warnings,
    timings: { encodeMs, searchMs: ms(searchStarted), totalMs: ms(started) },
    questionForPassages: encoded?.passage,
  };
}

/**
 * titleLinkDense: the question without the document names it holds, when the default mode links
 * titles with this weight and the question names a document; undefined otherwise. Not for a
 * client's own vectors (no text of theirs to re-encode) nor an external model.
 */
async function nameFreeQuestion(
  db: Database,
  mode: RetrievalMode,
  values: Ranking,
  o: { text?: string; filter?: RetrievalFilter; encoders?: EncoderSet },
): Promise<string | undefined> {
  if (mode !== 'HYBRID_HIERARCHICAL' || values.titleLink <= 0 || values.titleLinkDense <= 0 || !o.text || !o.encoders) return undefined;
  if (isExternal(o.encoders.byRole.questionPassage)) return undefined;
  return questionWithoutNames(db, o.text, o.filter);
}

/**
 * E_Q^ψ of the name-free question (the adapter applied as to the question's own vector), mixed
 * with the whole question's by weight w.
 */
async function attributeVector(
  stripped: string | undefined,
  w: number,
  o: { encoders?: EncoderSet; adapter?: QueryAdapter; whole?: Float32Array },
): Promise<Float32Array | undefined> {
  if (stripped === undefined || !o.encoders || !o.whole) return undefined;
  const encoded = (await o.encoders.encodeQuestion(stripped)).passage;
  const attribute = o.adapter ? adaptQuestion(o.adapter, { passage: encoded }).passage! : encoded;
  // Inner products are linear: one mixed vector scores as the mixed scores would.
  return w === 1 ? attribute : attribute.map((x, i) => w * x + (1 - w) * o.whole![i]);
}
