import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Int, ObjectType } from 'type-graphql';
import type { RetrievalMode as Mode } from '../../retrieval/modes';
import { RankingParameter, RetrievalModeEnum } from './retrieval';

// A version's fields, described once for the version in force and for each in the history.
const SET_BY = 'Who or what set it: an API key’s name, cli, tune, or a rollback.';
const EVIDENCE = 'What justified it (dhr tune: the data used and the scores of the chosen point and of the defaults).';
const PREVIOUS = 'The version in force before this one: what rollbackRetrievalSettings restores.';

/** What the version in force and each version of the history both say of themselves (an unreferenced decorated base: no type of its own, as job.ts JobTimes). */
@ObjectType()
abstract class VersionNotes {
  @Field(() => String, { nullable: true })
  note!: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: EVIDENCE })
  evidence!: Record<string, unknown> | null;

  @Field(() => Int, { nullable: true, description: PREVIOUS })
  previous!: number | null;
}

@ObjectType({ description: 'One mode’s ranking parameters in force when a question gives none, each with where it comes from (corpus, environment or mode).' })
export class ModeSettings {
  @Field(() => RetrievalModeEnum)
  mode!: Mode;

  @Field(() => [RankingParameter])
  parameters!: RankingParameter[];
}

@ObjectType({
  description:
    'The corpus’s retrieval settings (versioned): what a question leaves out comes from here, then from the server’s environment, then from the mode’s tuned default.',
})
export class RetrievalSettings extends VersionNotes {
  @Field(() => Int, { nullable: true, description: 'The version in force (null: never set; the defaults apply).' })
  version!: number | null;

  @Field(() => String, { nullable: true, description: SET_BY })
  setBy!: string | null;

  @Field(() => Date, { nullable: true })
  createdAt!: Date | null;

  @Field(() => [ModeSettings], { description: 'Every mode, with its parameters in force.' })
  modes!: ModeSettings[];
}

@ObjectType({ description: 'One stored version of the corpus’s retrieval settings, as it was set (retrievalSettingsHistory).' })
export class RetrievalSettingsVersion extends VersionNotes {
  @Field(() => Int)
  version!: number;

  @Field(() => GraphQLJSONObject, {
    description:
      'What this version sets, mode → parameter → value: the corpus’s layer only (what it leaves out comes from the server’s environment, then the mode’s tuned default).',
  })
  settings!: Record<string, unknown>;

  @Field(() => String, { description: SET_BY })
  setBy!: string;

  @Field(() => Date)
  createdAt!: Date;
}
