import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { RetrievalMode as Mode } from '../../retrieval/modes';
import { TUNE_RUN_STATUSES, type TuneRunStatus } from '../../store/tune-runs';
import { PSEUDO_KINDS } from '../../tuning/pseudo-questions';
import { graphqlEnum } from './enums';
import { RetrievalModeEnum } from './retrieval';

export const PseudoQuestionKindEnum = graphqlEnum(PSEUDO_KINDS, {
  name: 'PseudoQuestionKind',
  description: 'A source of the questions a tune asks of the corpus itself (docs/tuning.md).',
});

@InputType({ description: 'A question whose answers are known, for a tune to score beside its pseudo-questions.' })
export class LabelledQuestionInput {
  @Field(() => String)
  question!: string;

  @Field(() => [ID], { nullable: true, description: 'Passages (integer databaseIds or global ids) that answer it.' })
  passageIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Documents (by key) any passage of which answers it.' })
  documentKeys?: string[] | null;
}

export const TuneRunStatusEnum = Object.fromEntries(TUNE_RUN_STATUSES.map((s) => [s, s])) as { [K in TuneRunStatus]: K };
registerEnumType(TuneRunStatusEnum, {
  name: 'TuneRunStatus',
  description: 'running, then succeeded or failed (a run whose server stopped fails after 10 minutes without progress).',
});

@ObjectType({ description: 'A tune of the retrieval settings (dhr tune) started through the API: its progress, then its report.' })
export class TuneRun {
  @Field(() => ID)
  id!: string;

  @Field(() => RetrievalModeEnum)
  mode!: Mode;

  @Field(() => TuneRunStatusEnum)
  status!: TuneRunStatus;

  @Field(() => Int, { description: 'Grid points (baselines included) scored so far.' })
  pointsDone!: number;

  @Field(() => Int, { description: 'Grid points in all (0 until the pseudo-questions are drawn).' })
  pointsTotal!: number;

  @Field(() => Boolean, { description: 'Whether the choice is stored as a new settings version when it beats the settings in force.' })
  apply!: boolean;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      "Once succeeded: the questions by kind, the settings in force, the defaults, LEXICAL, HYBRID, the grid best first (MRR@20, Top-1, Top-20), the choice with its margin and reason, and (HYBRID_HIERARCHICAL) passageBudget: stage 2's size, each budget tried against none (MRR@20, recall@100) and the one chosen, the smallest that loses nothing.",
  })
  report!: Record<string, unknown> | null;

  @Field(() => Int, { nullable: true, description: 'The settings version it stored (null: none; a dry run, or the settings in force stayed).' })
  settingsVersion!: number | null;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => Date)
  startedAt!: Date;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;
}
