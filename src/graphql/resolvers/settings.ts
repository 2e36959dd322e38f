import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { parametersInForce, rollbackSettings, setModeSettings, versionRecord } from '../../retrieval/settings';
import type { RetrievalMode } from '../../retrieval/modes';
import type { Role } from '../../store/keys';
import { currentSettings, type SettingsVersion } from '../../store/retrieval-settings';
import type { Context } from '../context';
import { RetrievalModeEnum } from '../types/retrieval';
import { RetrievalSettings } from '../types/settings';

/** A version as the API shows it: every mode with each parameter's value in force and its source. */
function present(version: SettingsVersion | undefined, ctx: Context): RetrievalSettings {
  return { ...versionRecord(version), modes: parametersInForce(version, ctx.config.ranking) };
}

const setter = (ctx: Context) => ctx.principal?.name ?? 'anonymous';

@Resolver(() => RetrievalSettings)
export class RetrievalSettingsResolver {
  @Query(() => RetrievalSettings, { description: 'The corpus’s retrieval settings in force, per mode, and where each value comes from.' })
  async retrievalSettings(@Ctx() ctx: Context): Promise<RetrievalSettings> {
    return present(await currentSettings(ctx.db), ctx);
  }

  @Authorized<Role>('admin')
  @Mutation(() => RetrievalSettings, {
    description: 'Sets some of a mode’s parameters for every question that leaves them out (a new version; the others stay). Checked first: a bad value changes nothing.',
  })
  async setRetrievalSettings(
    @Ctx() ctx: Context,
    @Arg('mode', () => RetrievalModeEnum) mode: RetrievalMode,
    @Arg('values', () => GraphQLJSONObject, { nullable: true, description: 'Parameter → value, e.g. {"lambda": 0.3, "perDocument": 1}; perDocument null: no bound.' })
    values?: Record<string, unknown> | null,
    @Arg('unset', () => [String], { nullable: true, description: 'Parameters to remove from the mode’s settings.' }) unset?: string[] | null,
    @Arg('note', () => String, { nullable: true }) note?: string | null,
  ): Promise<RetrievalSettings> {
    const version = await setModeSettings(ctx.db, mode, { values: values ?? {}, unset: unset ?? [], setBy: setter(ctx), note: note ?? undefined });
    ctx.settings?.invalidate();
    return present(version, ctx);
  }

  @Authorized<Role>('admin')
  @Mutation(() => RetrievalSettings, { description: 'Restores the settings in force before the current version (a new version). None before: CONFLICT.' })
  async rollbackRetrievalSettings(@Ctx() ctx: Context): Promise<RetrievalSettings> {
    const version = await rollbackSettings(ctx.db, setter(ctx));
    ctx.settings?.invalidate();
    return present(version, ctx);
  }
}
