import { echo } from '../errors';
/**
 * A document's dense score from its passages (each measured on dev by `dhr eval`):
 * 'best': its best passage among the passage ANN hits (missing: the stage's minimum);
 * 'top3': the mean of its 3 best passages; 'centroid': cosine with the mean of its passage
 * vectors; both over every passage of each candidate document.
 */
export type DocumentPassages = 'best' | 'top3' | 'centroid';
export const DOCUMENT_PASSAGES: readonly DocumentPassages[] = ['best', 'top3', 'centroid'];

/**
 * The ranking parameters, declared once. Every place that takes them (the GraphQL
 * arguments, validation, corpus settings, the server's environment, the eval's runs) reads this
 * table, and every default is resolved by one function, `resolveRanking`, with one precedence:
 * request → corpus settings → server environment → the mode's built-in default.
 */
export interface Ranking {
  /** DHR's λ: score = passage + λ·document. */
  lambda: number;
  /** Weight of the dense score in the hybrid modes (1: dense only, 0: BM25 only); the passage stage of HYBRID_HIERARCHICAL. */
  alpha: number;
  /** HYBRID_HIERARCHICAL's alpha for its document stage (a layer that sets alpha alone sets this too). */
  documentAlpha: number;
  /** HYBRID_HIERARCHICAL's dense document score: the summary vector's weight against the document's passages (1: summary only). */
  summaryShare: number;
  /** How HYBRID_HIERARCHICAL scores a document from its passages when summaryShare < 1. */
  documentPassages: DocumentPassages;
  /** HYBRID_HIERARCHICAL's summary score: the best of the summary vector and its pieces' vectors. */
  summaryPieces: boolean;
  /** At most this many passages of one document among the ranked passages (null: no bound). */
  perDocument: number | null;
  /** Each further passage of one document loses this much final score: its n-th best by score, (n − 1)·perDocumentDecay (0: none). */
  perDocumentDecay: number;
  /** HYBRID_HIERARCHICAL: stage 2 scores the passages of stage 1's best documents, whole, until this many are taken (null: every passage of the k1 documents). */
  passageBudget: number | null;
  /** HYBRID_HIERARCHICAL: added to the document score of documents the question names (title or title head); their names' words are left out of stage 2's BM25 (0: no linking). */
  titleLink: number;
  /** HYBRID_HIERARCHICAL: a named document is linked only when stage 1 ranks it within this many on its own. */
  titleLinkRank: number;
  /** HYBRID_HIERARCHICAL: with a confirmed title link, the weight of the question without the names it holds (encoded a second time) in stage 2's dense side (0: the whole question only). */
  titleLinkDense: number;
}

export type RankingName = keyof Ranking;
/** Some of the parameters, as one source (a request, a corpus's settings, the environment) gives them. */
export type RankingLayer = { [K in RankingName]?: Ranking[K] };

/** Where a resolved value came from, in precedence order. */
export const RANKING_SOURCES = ['request', 'corpus', 'environment', 'mode'] as const;
export type RankingSource = (typeof RANKING_SOURCES)[number];

interface Spec<T> {
  description: string;
  /** Why a value is refused (words that follow the parameter's name), or undefined when it is allowed. */
  problem(value: unknown): string | undefined;
  /** The value when neither a layer nor the mode's defaults give one. */
  builtIn: T;
  /** Whether a question may set it (a GraphQL argument); the others are corpus, environment or eval settings. */
  request: boolean;
}

const number =
  (min: number, max: number, what = '') =>
  (v: unknown) =>
    typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max
      ? undefined
      : `must be a finite number from ${min}${what ? ` (${what.split('|')[0]})` : ''} to ${max}${what ? ` (${what.split('|')[1]})` : ''}, got ${echo(v)}`;
const integer =
  (min: number, max: number, what = '') =>
  (v: unknown) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? undefined : `must be an integer from ${min} to ${max}${what}, got ${echo(v)}`;

export const RANKING_LIMITS = {
  lambdaMin: 0,
  lambdaMax: 10,
  alphaMin: 0,
  alphaMax: 1,
  perDocumentMax: 1000,
  perDocumentDecayMax: 1,
  passageBudgetMax: 1_000_000,
  titleLinkMax: 10,
  titleLinkRankMax: 1000,
} as const;

export const RANKING: { [K in RankingName]: Spec<Ranking[K]> } = {
  lambda: {
    description: 'Weight of the document score in score = passage + λ·document (0–10).',
    problem: number(RANKING_LIMITS.lambdaMin, RANKING_LIMITS.lambdaMax),
    builtIn: 1,
    request: true,
  },
  alpha: {
    description: 'Hybrid modes: weight of the dense score, 0 (BM25 only) to 1 (dense only).',
    problem: number(RANKING_LIMITS.alphaMin, RANKING_LIMITS.alphaMax, 'BM25 only|dense only'),
    // The even fusion, for a mode without a tuned alpha (only read by the hybrid modes, which all have one).
    builtIn: 0.5,
    request: true,
  },
  documentAlpha: {
    description: 'HYBRID_HIERARCHICAL: alpha for its document stage, 0 to 1 (a source that gives alpha alone gives this too).',
    problem: number(RANKING_LIMITS.alphaMin, RANKING_LIMITS.alphaMax, 'BM25 only|dense only'),
    builtIn: 0.5,
    request: true,
  },
  summaryShare: {
    description: 'HYBRID_HIERARCHICAL: the summary vector’s weight in the dense document score against the document’s passages (1: summary only).',
    problem: number(0, 1),
    builtIn: 1,
    request: false,
  },
  documentPassages: {
    description: `HYBRID_HIERARCHICAL: a document's dense score from its passages when summaryShare < 1 (${DOCUMENT_PASSAGES.join(', ')}).`,
    problem: (v) => (DOCUMENT_PASSAGES.includes(v as DocumentPassages) ? undefined : `must be one of ${DOCUMENT_PASSAGES.join(', ')}, got ${echo(v)}`),
    builtIn: 'best',
    request: false,
  },
  summaryPieces: {
    description: 'HYBRID_HIERARCHICAL: score a document by the best of its summary vector and its pieces’ vectors.',
    problem: (v) => (typeof v === 'boolean' ? undefined : `must be true or false, got ${echo(v)}`),
    builtIn: false,
    request: false,
  },
  perDocument: {
    description: `At most this many passages of one document among those returned (1–${RANKING_LIMITS.perDocumentMax}; k2 or more: no bound; null: none).`,
    problem: (v) => (v === null ? undefined : integer(1, RANKING_LIMITS.perDocumentMax, ' (k2 or more: no bound)')(v)),
    builtIn: null,
    request: true,
  },
  perDocumentDecay: {
    description: `Each further passage of one document among the ranked ones loses this much final score, its n-th best (n − 1)·perDocumentDecay, so that a few long documents do not fill the top k2 (0–${RANKING_LIMITS.perDocumentDecayMax}, in the mode's score units; 0: none).`,
    problem: number(0, RANKING_LIMITS.perDocumentDecayMax),
    builtIn: 0,
    request: true,
  },
  passageBudget: {
    description: `HYBRID_HIERARCHICAL: stage 2 scores the passages of stage 1's documents in their order, each document whole, while fewer than this many are taken (the first document always; 1–${RANKING_LIMITS.passageBudgetMax}; null: every passage of the k1 documents).`,
    problem: (v) => (v === null ? undefined : integer(1, RANKING_LIMITS.passageBudgetMax)(v)),
    builtIn: null,
    request: true,
  },
  titleLink: {
    description: `HYBRID_HIERARCHICAL: documents whose title (or title head: the title before a parenthesis, comma, colon or dash) the question holds whole get this much more document score (0–${RANKING_LIMITS.titleLinkMax}, in fused-score units), and stage 2's BM25 leaves out their names' words, so that it scores what the question asks of the entity rather than the passages repeating its name (0: no linking).`,
    problem: number(0, RANKING_LIMITS.titleLinkMax),
    builtIn: 0,
    request: false,
  },
  titleLinkRank: {
    description: `HYBRID_HIERARCHICAL: with titleLink, a document the question names is linked only when stage 1 ranks it within this many documents on its own (1–${RANKING_LIMITS.titleLinkRankMax}): a title that is a common word ("string", "Exceptions") is held by many questions that do not ask about that document, and stage 1's own ranking tells those apart.`,
    problem: integer(1, RANKING_LIMITS.titleLinkRankMax),
    builtIn: 3,
    request: false,
  },
  titleLinkDense: {
    description:
      'HYBRID_HIERARCHICAL: with titleLink, when a named document is confirmed, stage 2 compares passages with the question vector mixed with this weight (0–1) of the question encoded again without the names it holds, as its BM25 leaves their words out: every passage of the named document shares its name, so the name cannot tell them apart, and a passage that repeats it (a Country name section) otherwise wins on it (0: the whole question only).',
    problem: number(0, 1),
    builtIn: 0,
    request: false,
  },
};

export const RANKING_NAMES = Object.keys(RANKING) as RankingName[];

/** The first parameter of a layer that is out of its range, with why; undefined when all are allowed. */
export function rankingProblem(layer: RankingLayer): { name: RankingName; message: string } | undefined {
  for (const name of RANKING_NAMES) {
    const value = layer[name];
    if (value === undefined) continue;
    const problem = RANKING[name].problem(value);
    if (problem) return { name, message: `${name} ${problem}` };
  }
  return undefined;
}

export interface ResolvedRanking {
  values: Ranking;
  /** Per parameter, the layer its value came from. */
  sources: Record<RankingName, RankingSource>;
}

/** A layer as it applies: documentAlpha follows the same layer's alpha when it gives alpha alone. */
const complete = (layer: RankingLayer | undefined): RankingLayer => {
  if (!layer) return {};
  return layer.documentAlpha === undefined && layer.alpha !== undefined ? { ...layer, documentAlpha: layer.alpha } : layer;
};

/**
 * Every parameter's value and where it came from: the first of request, corpus, environment that
 * gives it, else the mode's defaults (tuned on the public sets' dev splits, modes.ts), else the
 * parameter's built-in value.
 */
export function resolveRanking(
  modeDefaults: RankingLayer,
  layers: { request?: RankingLayer; corpus?: RankingLayer; environment?: RankingLayer },
): ResolvedRanking {
  const ordered: [RankingSource, RankingLayer][] = [
    ['request', complete(layers.request)],
    ['corpus', complete(layers.corpus)],
    ['environment', complete(layers.environment)],
    ['mode', modeDefaults],
  ];
  const values = {} as Record<RankingName, unknown>;
  const sources = {} as Record<RankingName, RankingSource>;
  for (const name of RANKING_NAMES) {
    const hit = ordered.find(([, layer]) => layer[name] !== undefined);
    values[name] = hit ? hit[1][name] : RANKING[name].builtIn;
    sources[name] = hit ? hit[0] : 'mode';
  }
  return { values: values as unknown as Ranking, sources };
}
