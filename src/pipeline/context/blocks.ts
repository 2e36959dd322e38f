import { badUserInput } from '../../errors';
import type { ContextPassage } from '../../store/context-passages';
import type { ResolvedContextOptions } from './options';
import type { ContextTokenizer } from './tokens';

/** A ranked passage as retrieve returns it; rank order is the array's order. */
export interface ContextHit {
  passageId: number;
  documentId: number;
  score: number;
}

/** One stretch of one section's passages in reading order: what a frontend sends its model. */
export interface ContextBlock {
  documentId: number;
  /** null: the document's text before its first heading. */
  sectionId: number | null;
  titlePath: string[];
  /** Its passages' text in reading order, joined by a blank line. */
  text: string;
  /** The passages it holds, in reading order: the hits and what expand or merge added. */
  passageIds: number[];
  /** Its best-ranked hit's score. */
  score: number;
  /** Its best-ranked hit's rank (from 1): blocks come in this order. */
  rank: number;
  tokens: number;
}

export interface AssembledContext {
  blocks: ContextBlock[];
  /** The blocks' tokens together: at most budget. */
  tokens: number;
  budget: number;
  /** Ranked passages in no block, because their block did not fit what was left of the budget. */
  truncated: number;
  tokenizer: string;
}

export const BLOCK_SEPARATOR = '\n\n';

const sectionKey = (documentId: number, sectionId: number | null) => `${documentId}:${sectionId ?? '-'}`;

/**
 * Pure: blocks from the ranked hits and every passage of the sections they lie in. A block is a
 * run of one section's passages (so never two documents): the hits, each grown as `expand` says,
 * or the whole section when at least mergeRatio of its passages are hits; runs that touch or
 * overlap are one block. Blocks are taken in their best hit's rank order while they fit; a block
 * that does not fit is left out whole (never cut) and the ones after it may still fit.
 * Hits whose passage is gone (a delete since the ranking) are left out.
 */
export function buildBlocks(
  hits: readonly ContextHit[],
  passages: readonly ContextPassage[],
  options: ResolvedContextOptions,
  counter: ContextTokenizer,
): AssembledContext {
  // A section taken whole is counted for the sectionTokens check and again as its block: once.
  const counts = new Map<string, number>();
  const tokenizer: ContextTokenizer = {
    name: counter.name,
    count: (text) => counts.get(text) ?? counts.set(text, counter.count(text)).get(text)!,
  };
  const sections = new Map<string, ContextPassage[]>();
  for (const p of passages) {
    const key = sectionKey(p.documentId, p.sectionId);
    const list = sections.get(key);
    if (list) list.push(p);
    else sections.set(key, [p]);
  }
  const rankOf = new Map<number, number>();
  hits.forEach((h, i) => {
    if (!rankOf.has(h.passageId)) rankOf.set(h.passageId, i);
  });

  const candidates: ContextBlock[] = [];
  const hitsIn = new Map<ContextBlock, number>();
  for (const list of sections.values()) {
    list.sort((a, b) => a.ordinal - b.ordinal);
    const hitAt = list.flatMap((p, i) => (rankOf.has(p.id) ? [i] : []));
    if (hitAt.length === 0) continue;
    const covered = coverage(list, hitAt, options, tokenizer);
    for (let start = 0; start < list.length; ) {
      if (!covered[start]) {
        start++;
        continue;
      }
      let end = start;
      while (end + 1 < list.length && covered[end + 1]) end++;
      const run = list.slice(start, end + 1);
      const ranks = run.flatMap((p) => (rankOf.has(p.id) ? [rankOf.get(p.id)!] : []));
      const best = Math.min(...ranks);
      const text = run.map((p) => p.text).join(BLOCK_SEPARATOR);
      const block: ContextBlock = {
        documentId: run[0].documentId,
        sectionId: run[0].sectionId,
        titlePath: run[0].titlePath,
        text,
        passageIds: run.map((p) => p.id),
        score: hits[best].score,
        rank: best + 1,
        tokens: tokenizer.count(text),
      };
      candidates.push(block);
      hitsIn.set(block, ranks.length);
      start = end + 1;
    }
  }
  candidates.sort((a, b) => a.rank - b.rank);

  const blocks: ContextBlock[] = [];
  let tokens = 0;
  let truncated = 0;
  for (const block of candidates) {
    if (tokens + block.tokens <= options.tokens) {
      blocks.push(block);
      tokens += block.tokens;
    } else {
      truncated += hitsIn.get(block)!;
    }
  }
  if (candidates.length > 0 && blocks.length === 0) {
    const smallest = Math.min(...candidates.map((b) => b.tokens));
    throw badUserInput(`tokens: a budget of ${options.tokens} holds no block; the smallest block here holds ${smallest} tokens (${tokenizer.name})`, 'tokens');
  }
  return { blocks, tokens, budget: options.tokens, truncated, tokenizer: tokenizer.name };
}

/** Which of a section's passages (in reading order) its hits bring into blocks. */
function coverage(list: readonly ContextPassage[], hitAt: readonly number[], o: ResolvedContextOptions, tokenizer: ContextTokenizer): boolean[] {
  const covered = new Array<boolean>(list.length).fill(false);
  const whole =
    hitAt.length / list.length >= o.mergeRatio || (o.expand === 'SECTION' && tokenizer.count(list.map((p) => p.text).join(BLOCK_SEPARATOR)) <= o.sectionTokens);
  if (whole) return covered.fill(true);
  const reach = o.expand === 'WINDOW' ? o.window : 0;
  for (const i of hitAt) {
    for (let j = Math.max(0, i - reach); j <= Math.min(list.length - 1, i + reach); j++) covered[j] = true;
  }
  return covered;
}
