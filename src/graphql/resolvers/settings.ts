import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { badUserInput, DomainError, ErrorCode, notFound } from '../../errors';
import { DEFAULT_MODE } from '../../retrieval/modes';
import { failStaleTuneRuns, tuneRun, tuneRunning, type TuneRunRow } from '../../store/tune-runs';
import { labelledQuestions } from '../../tuning/labelled';
import { QUESTIONS_PER_KIND, type PseudoKind } from '../../tuning/pseudo-questions';
import { startTuneRun } from '../../tuning/runs';
import { checkPageSize, parseId, parseNodeId } from '../ids';
import { currentLogger } from '../../observability/request-scope';
import { LabelledQuestionInput, PseudoQuestionKindEnum, TuneRun } from '../types/tune';
import { parametersInForce, rollbackSettings, setModeSettings, versionRecord } from '../../retrieval/settings';
import type { RetrievalMode } from '../../retrieval/modes';
import type { Role } from '../../store/keys';
import { currentSettings, settingsHistory, type SettingsVersion } from '../../store/retrieval-settings';
import type { Context } from '../context';
import { RetrievalModeEnum } from '../types/retrieval';
import { RetrievalSettings, RetrievalSettingsVersion } from '../types/settings';

/** A version as the API shows it: every mode with each parameter's value in force and its source. */
function present(version: SettingsVersion | undefined, ctx: Context): RetrievalSettings {
  return { ...versionRecord(version), modes: parametersInForce(version, ctx.config.ranking) };
}

/** The most versions one retrievalSettingsHistory returns (dhr settings history --limit's bound). */
const MAX_HISTORY = 1000;

const presentRun = (r: TuneRunRow): TuneRun => ({ ...r, id: String(r.id), mode: r.mode as RetrievalMode });

const setter = (ctx: Context) => ctx.principal?.name ?? 'anonymous';

@Resolver(() => RetrievalSettings)
export class RetrievalSettingsResolver {
  @Query(() => RetrievalSettings, { description: 'The corpus’s retrieval settings in force, per mode, and where each value comes from.' })
  async retrievalSettings(@Ctx() ctx: Context): Promise<RetrievalSettings> {
    return present(await currentSettings(ctx.db), ctx);
  }

  @Query(() => [RetrievalSettingsVersion], {
    description: 'The stored versions of the corpus’s retrieval settings, newest first, each as it was set (dhr settings history).',
  })
  async retrievalSettingsHistory(
    @Ctx() ctx: Context,
    @Arg('first', () => Int, { defaultValue: 20, description: `At most this many (0–${MAX_HISTORY}).` }) first = 20,
  ): Promise<RetrievalSettingsVersion[]> {
    return settingsHistory(ctx.db, checkPageSize(first, MAX_HISTORY));
  }

  @Authorized<Role>('admin')
  @Mutation(() => RetrievalSettings, {
    description:
      'Sets some of a mode’s parameters for every question that leaves them out (a new version; the others stay). Checked first: a bad value changes nothing.',
  })
  async setRetrievalSettings(
    @Ctx() ctx: Context,
    @Arg('mode', () => RetrievalModeEnum) mode: RetrievalMode,
    @Arg('values', () => GraphQLJSONObject, {
      nullable: true,
      description: 'Parameter → value, e.g. {"lambda": 0.3, "perDocument": 1}; perDocument null: no bound.',
    })
    values?: Record<string, unknown> | null,
    @Arg('unset', () => [String], { nullable: true, description: 'Parameters to remove from the mode’s settings.' }) unset?: string[] | null,
    @Arg('note', () => String, { nullable: true }) note?: string | null,
  ): Promise<RetrievalSettings> {
    const version = await setModeSettings(ctx.db, mode, { values: values ?? {}, unset: unset ?? [], setBy: setter(ctx), note: note ?? undefined });
    ctx.settings?.invalidate();
    return present(version, ctx);
  }

  @Authorized<Role>('admin')
  @Mutation(() => TuneRun, {
    description:
      'Starts a tune (dhr tune) in the background of this server and returns it at once: poll tuneRun(id) for its progress and report. One at a time per store (CONFLICT).',
  })
  async tuneRetrievalSettings(
    @Ctx() ctx: Context,
    @Arg('mode', () => RetrievalModeEnum, { defaultValue: DEFAULT_MODE }) mode: RetrievalMode,
    @Arg('questionsPerKind', () => Int, {
      defaultValue: QUESTIONS_PER_KIND.default,
      description: `Pseudo-questions of each kind (${QUESTIONS_PER_KIND.min}–${QUESTIONS_PER_KIND.max}).`,
    })
    perKind: number,
    @Arg('seed', () => Int, { defaultValue: 0, description: 'Drives every draw: the same seed and store give the same questions.' }) seed: number,
    @Arg('apply', () => Boolean, { defaultValue: false, description: 'Store the choice as a new settings version when it beats the settings in force.' })
    apply: boolean,
    @Arg('kinds', () => [PseudoQuestionKindEnum], { nullable: true, description: 'The sources of pseudo-questions to draw (default: every one).' })
    kinds?: PseudoKind[] | null,
    @Arg('questions', () => [LabelledQuestionInput], { nullable: true, description: 'Labelled questions, scored beside the pseudo-questions.' })
    questions?: LabelledQuestionInput[] | null,
  ): Promise<TuneRun> {
    if (kinds && kinds.length === 0) throw badUserInput('kinds must name at least one kind (or be left out for all)', 'kinds');
    if (!Number.isInteger(perKind) || perKind < QUESTIONS_PER_KIND.min || perKind > QUESTIONS_PER_KIND.max)
      throw badUserInput(`questionsPerKind must be an integer from ${QUESTIONS_PER_KIND.min} to ${QUESTIONS_PER_KIND.max}, got ${perKind}`, 'questionsPerKind');
    if (seed < 0) throw badUserInput(`seed must be 0 or more, got ${seed}`, 'seed');
    const targets = await ctx.models?.current();
    if (!targets) throw badUserInput('this server runs without encoders: a tune needs the active models to run its questions', 'mode');
    const at = (i: number) => `questions[${i}]`;
    const labelled = questions
      ? await labelledQuestions(
          ctx.db,
          questions.map((q, i) => ({
            question: q.question,
            passageIds: (q.passageIds ?? []).map((id) => parseNodeId(id, 'Passage', `${at(i)}.passageIds`)),
            documentKeys: q.documentKeys ?? [],
          })),
          at,
        )
      : undefined;
    const logger = currentLogger();
    await failStaleTuneRuns(ctx.db);
    if (await tuneRunning(ctx.db))
      throw new DomainError(ErrorCode.CONFLICT, 'a tune of the retrieval settings is already running on this store; poll tuneRun for it', { argument: 'mode' });
    // The unshared store: the tune outlives this request (and its share of the pool and deadline).
    const { run } = await startTuneRun(ctx.store, targets, {
      mode,
      perKind,
      seed,
      apply,
      tune: { environment: ctx.config.ranking, bm25: ctx.config.bm25, kinds: kinds ?? undefined, labelled },
      onApplied: () => ctx.settings?.invalidate(),
      onError: (error) => logger.error({ err: error }, 'tune failed'),
    });
    return presentRun(run);
  }

  @Authorized<Role>('admin')
  @Query(() => TuneRun, { description: 'A tune started with tuneRetrievalSettings: its progress, then its report.' })
  async tuneRun(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<TuneRun> {
    await failStaleTuneRuns(ctx.db);
    const run = await tuneRun(ctx.db, parseId(id, 'id'));
    if (!run) throw notFound(`tune run ${id} does not exist`, 'id');
    return presentRun(run);
  }

  @Authorized<Role>('admin')
  @Mutation(() => RetrievalSettings, { description: 'Restores the settings in force before the current version (a new version). None before: CONFLICT.' })
  async rollbackRetrievalSettings(@Ctx() ctx: Context): Promise<RetrievalSettings> {
    const version = await rollbackSettings(ctx.db, setter(ctx));
    ctx.settings?.invalidate();
    return present(version, ctx);
  }
}
