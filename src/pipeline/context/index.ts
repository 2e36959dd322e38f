import type { Queryable } from '../../store/db';
import { passagesOfSectionsHolding } from '../../store/context-passages';
import { buildBlocks, type AssembledContext, type ContextHit } from './blocks';
import { validateContextOptions, type ContextOptions } from './options';
import type { ContextTokenizer } from './tokens';

export * from './blocks';
export * from './options';
export * from './tokens';

/**
 * Context blocks for a retrieval's ranked passages within a token budget: the options checked
 * first, one read of the hits' sections, then the pure assembly (blocks.ts).
 */
export async function assembleContext(
  db: Queryable,
  hits: readonly ContextHit[],
  options: ContextOptions,
  tokenizer: ContextTokenizer,
): Promise<AssembledContext> {
  const resolved = validateContextOptions(options);
  const passages = hits.length === 0 ? [] : await passagesOfSectionsHolding(db, hits);
  return buildBlocks(hits, passages, resolved, tokenizer);
}
