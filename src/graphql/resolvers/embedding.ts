import { Ctx, Query, Resolver } from 'type-graphql';
import { ENCODER_ROLES } from '../../encoders/types';
import { modelCounts } from '../../store/embeddings';
import type { Context } from '../context';
import { EmbeddingModel, EncoderRoleName } from '../types/embedding';

@Resolver(() => EmbeddingModel)
export class EmbeddingModelResolver {
  @Query(() => [EmbeddingModel], { description: 'Every registered embedding model with its coverage.' })
  async embeddingModels(@Ctx() ctx: Context): Promise<EmbeddingModel[]> {
    const byRole = ctx.embedding?.encoders.byRole;
    return (await modelCounts(ctx.db)).map((m) => ({
      ...m,
      roles: byRole ? (ENCODER_ROLES.filter((r) => byRole[r].name === m.name) as string[] as EncoderRoleName[]) : [],
    }));
  }
}
