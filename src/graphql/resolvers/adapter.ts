import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { AdapterLevel } from '../../adapters/linear';
import type { LevelReport } from '../../pipeline/adapt';
import { activateAdapter, dropAdapter, listAdapters, type AdapterRow } from '../../store/adapters';
import type { Role } from '../auth';
import type { Context } from '../context';
import { Adapter, type AdapterLevelTraining } from '../types/adapter';

/** The GraphQL view of a stored adapter: its training record's figures, never its weights. */
export function toAdapter(row: AdapterRow): Adapter {
  const record = row.training as { pairs?: number; levels?: Partial<Record<AdapterLevel, LevelReport>> };
  const levels: AdapterLevelTraining[] = row.levels.map((level) => {
    // dhr adapt records every figure; a row registered otherwise may lack any of them, read as a level without its record (0).
    const report = record.levels?.[level] as Partial<LevelReport> | undefined;
    const models = row.models[level]!;
    const curve = report?.curve ?? [];
    const bestEpoch = report?.bestEpoch ?? 0;
    const best = bestEpoch > 0 ? curve[bestEpoch - 1]?.heldOut : report?.baseline;
    return {
      level,
      questionModel: models.question,
      questionModelId: models.questionId,
      targetModel: models.target,
      targetModelId: models.targetId,
      trainPairs: report?.pairs?.train ?? 0,
      heldOutPairs: report?.pairs?.heldOut ?? 0,
      baselineRecallAt1: report?.baseline?.accuracy ?? 0,
      recallAt1: best?.accuracy ?? 0,
      bestEpoch,
      epochs: curve.map((e) => ({ epoch: e.epoch, trainLoss: e.trainLoss, heldOutLoss: e.heldOut?.loss ?? 0, heldOutRecallAt1: e.heldOut?.accuracy ?? 0 })),
    };
  });
  return { name: row.name, active: row.active, dimension: row.dimension, pairs: record.pairs ?? 0, levels, training: row.training, createdAt: row.createdAt };
}

@Resolver(() => Adapter)
export class AdapterResolver {
  @Authorized<Role>('admin')
  @Query(() => [Adapter], { description: 'Every registered query-side adapter (dhr adapt), oldest first, with its training record.' })
  async adapters(@Ctx() ctx: Context): Promise<Adapter[]> {
    return (await listAdapters(ctx.db)).map(toAdapter);
  }

  @Authorized<Role>('admin')
  @Mutation(() => [Adapter], {
    description:
      'Makes an adapter the one retrieval applies to question vectors, in one transaction (null: none, i.e. roll back to plain scores). Refused with DIMENSION_MISMATCH or CONFLICT unless it was trained for the active models.',
  })
  async activateAdapter(@Ctx() ctx: Context, @Arg('name', () => String, { nullable: true }) name?: string | null): Promise<Adapter[]> {
    await activateAdapter(ctx.db, name ?? null);
    ctx.models?.invalidate();
    return (await listAdapters(ctx.db)).map(toAdapter);
  }

  @Authorized<Role>('admin')
  @Mutation(() => [Adapter], {
    description:
      'Deletes a registered adapter and its training record; returns the adapters left. The active adapter is refused with CONFLICT (activate another, or null, first); an unknown name is NOT_FOUND.',
  })
  async dropAdapter(@Ctx() ctx: Context, @Arg('name', () => String) name: string): Promise<Adapter[]> {
    await dropAdapter(ctx.db, name);
    return (await listAdapters(ctx.db)).map(toAdapter);
  }
}
