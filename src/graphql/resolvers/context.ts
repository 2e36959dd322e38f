import { Arg, Ctx, FieldResolver, Float, Int, Resolver, Root } from 'type-graphql';
import { assembleContext, CONTEXT_LIMITS, contextTokenizer, type ContextExpand } from '../../pipeline/context';
import type { Context } from '../context';
import { toGlobalId } from '../ids';
import { ContextExpandEnum, RetrievalContext } from '../types/context';
import { Retrieval } from '../types/retrieval';

/** Retrieval.context: the ranked passages assembled into blocks (src/pipeline/context). */
@Resolver(() => Retrieval)
export class RetrievalContextResolver {
  @FieldResolver(() => RetrievalContext, {
    description: `The ranked passages as context blocks within a token budget: adjacent ones of one section merged, grown as expand says, a section whole when at least mergeRatio of its passages are ranked; blocks in rank order, passages in reading order within a block. BAD_USER_INPUT naming the argument when one is out of range or the budget holds no block.`,
  })
  async context(
    @Root() r: Retrieval,
    @Ctx() ctx: Context,
    @Arg('tokens', () => Int, { description: `The budget for all blocks’ text (1–${CONTEXT_LIMITS.maxTokens}).` }) tokens: number,
    @Arg('expand', () => ContextExpandEnum, { nullable: true, description: 'Left out: NONE.' }) expand?: ContextExpand | null,
    @Arg('window', () => Int, {
      nullable: true,
      description: `expand WINDOW: neighbours each side (0–${CONTEXT_LIMITS.maxWindow}); a window past its section’s ends stops there. Left out: ${CONTEXT_LIMITS.defaultWindow}.`,
    })
    window?: number | null,
    @Arg('sectionTokens', () => Int, { nullable: true, description: 'expand SECTION: the most tokens a section may hold to be taken whole. Left out: tokens.' })
    sectionTokens?: number | null,
    @Arg('mergeRatio', () => Float, {
      nullable: true,
      description: `The share of a section’s passages ranked for the whole section to be the block, above 0 and at most 1 (LlamaIndex’s auto-merging ratio). Left out: ${CONTEXT_LIMITS.defaultMergeRatio}.`,
    })
    mergeRatio?: number | null,
  ): Promise<RetrievalContext> {
    const targets = await ctx.models?.current();
    const assembled = await assembleContext(
      ctx.db,
      r.passages.map((p) => ({ passageId: p.passageId, documentId: p.documentId, score: p.score })),
      { tokens, expand: expand ?? undefined, window: window ?? undefined, sectionTokens: sectionTokens ?? undefined, mergeRatio: mergeRatio ?? undefined },
      contextTokenizer(targets?.encoders.byRole.passage),
    );
    return {
      ...assembled,
      blocks: assembled.blocks.map((b) => ({
        ...b,
        passageIds: b.passageIds.map((id) => toGlobalId('Passage', id)),
        documentId: toGlobalId('Document', b.documentId),
        sectionId: b.sectionId === null ? null : toGlobalId('Section', b.sectionId),
      })),
    };
  }
}
