import { GraphQLError } from 'graphql';
import { Arg, Ctx, FieldResolver, Float, Int, Query, Resolver, Root } from 'type-graphql';
import { retrieve } from '../../retrieval/retrieve';
import type { RetrievalMode } from '../../retrieval/types';
import { RetrievalInputError } from '../../retrieval/validate';
import type { Context } from '../context';
import { badUserInput } from '../errors';
import { parseId } from '../ids';
import { Document } from '../types/document';
import { Passage } from '../types/passage';
import { Retrieval, RetrievalFilterInput, RetrievalModeEnum, ScoredDocument, ScoredPassage } from '../types/retrieval';

@Resolver(() => Retrieval)
export class RetrievalResolver {
  @Query(() => Retrieval, {
    description:
      'Dense Hierarchical Retrieval. Limits: question 1–2000 characters; 1 ≤ k1, k2 ≤ 1000; 0 ≤ lambda ≤ 10 (finite). Returns min(k2, candidates) passages.',
  })
  async retrieve(
    @Ctx() ctx: Context,
    @Arg('question', () => String) question: string,
    @Arg('k1', () => Int, { defaultValue: 100 }) k1: number,
    @Arg('k2', () => Int, { defaultValue: 20 }) k2: number,
    @Arg('lambda', () => Float, { defaultValue: 1.0 }) lambda: number,
    @Arg('mode', () => RetrievalModeEnum, { defaultValue: 'HIERARCHICAL' }) mode: RetrievalMode,
    @Arg('filter', () => RetrievalFilterInput, { nullable: true }) filter?: RetrievalFilterInput | null,
    @Arg('exact', () => Boolean, { defaultValue: false, description: 'Score every candidate exactly instead of using HNSW (slower).' })
    exact?: boolean,
  ): Promise<Retrieval> {
    const parsedFilter = filter
      ? {
          documentIds: filter.documentIds?.map((id) => parseId(id, 'filter.documentIds')),
          sources: filter.sources ?? undefined,
          metadata: filter.metadata ?? undefined,
        }
      : undefined;
    // One snapshot of the active models for the whole query, even if an activation lands meanwhile.
    const targets = await ctx.models?.current();
    if (mode !== 'LEXICAL' && !targets) {
      throw new GraphQLError('retrieval needs encoders, and this server runs without them', {
        extensions: { code: 'SERVICE_UNAVAILABLE' },
      });
    }
    try {
      const result = await retrieve(
        ctx.db,
        targets,
        { question, k1, k2, lambda, mode, filter: parsedFilter },
        {
          exact,
          efSearch: ctx.config.efSearch,
          efFactor: ctx.config.efFactor,
          iterativeScan: ctx.config.iterativeScan,
          maxScanTuples: ctx.config.maxScanTuples,
        },
      );
      return {
        passages: result.passages.map((p, i) => ({ ...p, rank: i + 1 })),
        documents: result.documents.map((d, i) => ({ ...d, rank: i + 1 })),
        mode,
        k1,
        k2,
        lambda,
        model: result.model,
        timings: result.timings,
      };
    } catch (error) {
      if (error instanceof RetrievalInputError) throw badUserInput(error.message, error.argument);
      throw error;
    }
  }
}

@Resolver(() => ScoredPassage)
export class ScoredPassageResolver {
  @FieldResolver(() => Passage)
  async passage(@Root() scored: ScoredPassage, @Ctx() ctx: Context): Promise<Passage> {
    return (await ctx.loaders.passage.load(scored.passageId)) as Passage;
  }
}

@Resolver(() => ScoredDocument)
export class ScoredDocumentResolver {
  @FieldResolver(() => Document)
  async document(@Root() scored: ScoredDocument, @Ctx() ctx: Context): Promise<Document> {
    return (await ctx.loaders.document.load(scored.documentId)) as Document;
  }
}
