import { GraphQLError } from 'graphql';
import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { ENCODER_ROLES, EncoderError, type EncoderRole } from '../../encoders/types';
import { registerModelFromPath } from '../../jobs/models';
import { activateModel, dropModel, ModelStateError } from '../../store/active';
import { EmbeddingModelError, modelByName, modelCounts } from '../../store/embeddings';
import type { Role } from '../auth';
import type { Context } from '../context';
import { badUserInput } from '../errors';
import { EmbeddingModel, EncoderRoleName } from '../types/embedding';

@Resolver(() => EmbeddingModel)
export class EmbeddingModelResolver {
  @Query(() => [EmbeddingModel], { description: 'Every registered embedding model with its coverage and the roles it serves.' })
  embeddingModels(@Ctx() ctx: Context): Promise<EmbeddingModel[]> {
    return listModels(ctx);
  }

  @Authorized<Role>('admin')
  @Mutation(() => EmbeddingModel, {
    description:
      "Registers a model folder (model.onnx, tokenizer.json, dhr-model.json) or 'use-lite': loads it and probes its dimension first. It serves nothing until reembed has covered the corpus and it is activated.",
  })
  async registerEmbeddingModel(@Ctx() ctx: Context, @Arg('path', () => String) path: string): Promise<EmbeddingModel> {
    if (path.trim() === '') throw badUserInput('path must name a model folder or "use-lite"', 'path');
    try {
      const { name } = await registerModelFromPath(ctx.db, path, { cacheDir: ctx.config.modelCacheDir, threads: ctx.config.encoderThreads });
      return (await listModels(ctx)).find((m) => m.name === name)!;
    } catch (error) {
      if (error instanceof EncoderError) throw new GraphQLError(error.message, { extensions: { code: 'MODEL_INVALID', argument: 'path' } });
      if (error instanceof EmbeddingModelError) throw new GraphQLError(error.message, { extensions: { code: 'CONFLICT', argument: 'path' } });
      throw error;
    }
  }

  @Authorized<Role>('admin')
  @Mutation(() => [EmbeddingModel], {
    description:
      'Switches retrieval (and embedding on ingest) to a model for the given roles (default: all four) in one transaction. Refused with MODEL_INCOMPLETE unless the model has current embeddings for every document (document role) and passage (passage role).',
  })
  async activateEmbeddingModel(
    @Ctx() ctx: Context,
    @Arg('model', () => String) model: string,
    @Arg('roles', () => [EncoderRoleName], { nullable: true }) roles?: EncoderRoleName[] | null,
  ): Promise<EmbeddingModel[]> {
    if (roles && roles.length === 0) throw badUserInput('roles must name at least one role (or be omitted for all four)', 'roles');
    const row = await modelByName(ctx.db, model);
    if (!row) throw new GraphQLError(`no embedding model named "${model}" is registered`, { extensions: { code: 'NOT_FOUND', argument: 'model' } });
    // Load it before switching: a model this server cannot load must not become the one it serves.
    if (ctx.models) {
      try {
        await ctx.models.encoderFor(row);
      } catch (error) {
        throw new GraphQLError(error instanceof Error ? error.message : String(error), { extensions: { code: 'MODEL_UNAVAILABLE', argument: 'model' } });
      }
    }
    await modelState(() => activateModel(ctx.db, model, (roles ?? ENCODER_ROLES) as EncoderRole[]));
    ctx.models?.invalidate();
    return listModels(ctx);
  }

  @Authorized<Role>('admin')
  @Mutation(() => Boolean, { description: 'Deletes a model that serves no role, with its embeddings and jobs.' })
  async dropEmbeddingModel(@Ctx() ctx: Context, @Arg('model', () => String) model: string): Promise<boolean> {
    await modelState(() => dropModel(ctx.db, model));
    return true;
  }
}

async function listModels(ctx: Context): Promise<EmbeddingModel[]> {
  // modelCounts lists roles in ENCODER_ROLES order, the enum's values.
  return (await modelCounts(ctx.db)).map((m) => ({ ...m, roles: m.roles as EncoderRoleName[] }));
}

async function modelState<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ModelStateError) {
      throw new GraphQLError(error.message, {
        extensions: { code: error.code, argument: 'model', ...(error.missing ? { missing: error.missing } : {}) },
      });
    }
    throw error;
  }
}
