import { badUserInput } from '../../errors';

/**
 * How a hit grows into a block: NONE keeps the hits (adjacent hits of one section merged), WINDOW
 * adds each hit's neighbours in reading order (Haystack's sentence window), SECTION takes each
 * hit's whole section when it fits `sectionTokens` (LangChain's parent document).
 */
export const CONTEXT_EXPANSIONS = ['NONE', 'WINDOW', 'SECTION'] as const;
export type ContextExpand = (typeof CONTEXT_EXPANSIONS)[number];

export interface ContextOptions {
  /** Token budget for all blocks' text together. */
  tokens: number;
  /** Left out: NONE. */
  expand?: ContextExpand;
  /** WINDOW only: passages each side of a hit, within its section. Left out: 1. */
  window?: number;
  /** SECTION only: the most tokens a whole section may hold to be taken whole. Left out: tokens. */
  sectionTokens?: number;
  /** When at least this share of a section's passages are hits, the whole section is the block (LlamaIndex's auto-merging ratio). Left out: 0.5. */
  mergeRatio?: number;
}

/** Options with every default applied. */
export interface ResolvedContextOptions {
  tokens: number;
  expand: ContextExpand;
  window: number;
  sectionTokens: number;
  mergeRatio: number;
}

export const CONTEXT_LIMITS = { maxTokens: 100_000, maxWindow: 20, defaultWindow: 1, defaultMergeRatio: 0.5 } as const;

const isInt = (n: number) => Number.isInteger(n);

/** Every argument checked before anything is read, so a refusal leaves nothing half assembled. */
export function validateContextOptions(o: ContextOptions): ResolvedContextOptions {
  const { maxTokens, maxWindow } = CONTEXT_LIMITS;
  if (!isInt(o.tokens) || o.tokens < 1 || o.tokens > maxTokens) {
    throw badUserInput(`tokens must be an integer from 1 to ${maxTokens}, got ${o.tokens}`, 'tokens');
  }
  const expand = o.expand ?? 'NONE';
  if (!CONTEXT_EXPANSIONS.includes(expand)) throw badUserInput(`expand must be one of ${CONTEXT_EXPANSIONS.join(', ')}, got ${String(expand)}`, 'expand');
  if (o.window !== undefined) {
    if (expand !== 'WINDOW') throw badUserInput(`window applies to expand WINDOW only (expand is ${expand})`, 'window');
    if (!isInt(o.window) || o.window < 0 || o.window > maxWindow) {
      throw badUserInput(`window must be an integer from 0 to ${maxWindow} passages each side, got ${o.window}`, 'window');
    }
  }
  if (o.sectionTokens !== undefined) {
    if (expand !== 'SECTION') throw badUserInput(`sectionTokens applies to expand SECTION only (expand is ${expand})`, 'sectionTokens');
    if (!isInt(o.sectionTokens) || o.sectionTokens < 1 || o.sectionTokens > maxTokens) {
      throw badUserInput(`sectionTokens must be an integer from 1 to ${maxTokens}, got ${o.sectionTokens}`, 'sectionTokens');
    }
  }
  const mergeRatio = o.mergeRatio ?? CONTEXT_LIMITS.defaultMergeRatio;
  if (!Number.isFinite(mergeRatio) || mergeRatio <= 0 || mergeRatio > 1) {
    throw badUserInput(
      `mergeRatio must be above 0 and at most 1 (the share of a section's passages hit for the whole section to be the block), got ${mergeRatio}`,
      'mergeRatio',
    );
  }
  return {
    tokens: o.tokens,
    expand,
    window: o.window ?? CONTEXT_LIMITS.defaultWindow,
    sectionTokens: o.sectionTokens ?? o.tokens,
    mergeRatio,
  };
}
