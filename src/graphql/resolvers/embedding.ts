import { Arg, Authorized, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ENCODER_ROLES, type EncoderRole } from '../../encoders/types';
import { badUserInput } from '../../errors';
import { registerModelInModelsDir } from '../../pipeline/jobs/model-folder';
import { activateStoredModel, registerExternalModel } from '../../pipeline/jobs/models';
import { dropModel } from '../../store/active';
import { modelCounts } from '../../store/embeddings';
import type { Role } from '../auth';
import type { Context } from '../context';
import { EmbeddingModel, EncoderRoleEnum } from '../types/embedding';

@Resolver(() => EmbeddingModel)
export class EmbeddingModelResolver {
  @Query(() => [EmbeddingModel], { description: 'Every registered embedding model with its coverage and the roles it serves.' })
  embeddingModels(@Ctx() ctx: Context): Promise<EmbeddingModel[]> {
    return modelCounts(ctx.db);
  }

  @Authorized<Role>('admin')
  @Mutation(() => EmbeddingModel, {
    description:
      "Registers a model folder (model.onnx, tokenizer.json, dhr-model.json) inside the server's models directory (MODELS_DIR; path is relative to it), or 'use-lite': loads it and probes its dimension first. It serves nothing until reembed has covered the corpus and it is activated.",
  })
  async registerEmbeddingModel(@Ctx() ctx: Context, @Arg('path', () => String) path: string): Promise<EmbeddingModel> {
    if (path.trim() === '') throw badUserInput('path must name a model folder or "use-lite"', 'path');
    const { name } = await registerModelInModelsDir(ctx.db, ctx.config.modelsDir, path, {
      cacheDir: ctx.config.modelCacheDir,
      threads: ctx.config.encoderThreads,
    });
    const model = (await modelCounts(ctx.db)).find((m) => m.name === name);
    if (!model) throw new Error(`model "${name}" was registered but is not listed`);
    return model;
  }

  @Authorized<Role>('admin')
  @Mutation(() => EmbeddingModel, {
    description:
      "Registers an external model (bring your own vectors): a name and a dimension, no encoder files (runtime 'external'). Its document and passage vectors come with ingestDocuments (DocumentInput.vector, passages[].vector), its question vectors with retrieve (questionVector); the server never encodes with it. Activated like any model once every document and passage has its vector. Again with the same dimension: a no-op.",
  })
  async registerExternalEmbeddingModel(
    @Ctx() ctx: Context,
    @Arg('name', () => String) name: string,
    @Arg('dimension', () => Int, { description: 'Numbers per vector (1–2000).' }) dimension: number,
  ): Promise<EmbeddingModel> {
    await registerExternalModel(ctx.db, name, dimension);
    const model = (await modelCounts(ctx.db)).find((m) => m.name === name);
    if (!model) throw new Error(`model "${name}" was registered but is not listed`);
    return model;
  }

  @Authorized<Role>('admin')
  @Mutation(() => [EmbeddingModel], {
    description:
      'Switches retrieval (and embedding on ingest) to a model for the given roles (default: all four) in one transaction. Refused with MODEL_INCOMPLETE unless the model has current embeddings for every document (document role) and passage (passage role).',
  })
  async activateEmbeddingModel(
    @Ctx() ctx: Context,
    @Arg('model', () => String) model: string,
    @Arg('roles', () => [EncoderRoleEnum], { nullable: true }) roles?: EncoderRole[] | null,
  ): Promise<EmbeddingModel[]> {
    if (roles && roles.length === 0) throw badUserInput('roles must name at least one role (or be omitted for all four)', 'roles');
    await activateStoredModel(ctx.db, model, roles ?? ENCODER_ROLES, ctx.models);
    return modelCounts(ctx.db);
  }

  @Authorized<Role>('admin')
  @Mutation(() => Boolean, { description: 'Deletes a model that serves no role, with its embeddings and jobs.' })
  async dropEmbeddingModel(@Ctx() ctx: Context, @Arg('model', () => String) model: string): Promise<boolean> {
    await dropModel(ctx.db, model);
    return true;
  }
}
