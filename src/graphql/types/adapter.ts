import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { ADAPTER_LEVELS, type AdapterLevel } from '../../adapters/linear';
import { graphqlEnum } from './enums';

export const AdapterLevelEnum = graphqlEnum(ADAPTER_LEVELS, {
  name: 'AdapterLevel',
  description: 'Which question vector an adapter maps: the one for the document stage or for the passage stage.',
});

@ObjectType({ description: 'One training epoch of an adapter level.' })
export class AdapterEpoch {
  @Field(() => Int)
  epoch!: number;

  @Field(() => Float)
  trainLoss!: number;

  @Field(() => Float)
  heldOutLoss!: number;

  @Field(() => Float, { description: 'Share of held-out pairs whose positive ranked first among in-chunk positives and its hard negatives.' })
  heldOutRecallAt1!: number;
}

@ObjectType({ description: 'How one level of an adapter was trained, and over which models.' })
export class AdapterLevelTraining {
  @Field(() => AdapterLevelEnum)
  level!: AdapterLevel;

  @Field(() => String, { description: 'The question encoder whose vectors it maps.' })
  questionModel!: string;

  @Field(() => Int, { description: "That model's integer id in the database (as `dhr adapters` lists it)." })
  questionModelId!: number;

  @Field(() => String, { description: 'The model whose stored vectors it was trained against.' })
  targetModel!: string;

  @Field(() => Int, { description: "That model's integer id in the database (as `dhr adapters` lists it)." })
  targetModelId!: number;

  @Field(() => Int)
  trainPairs!: number;

  @Field(() => Int)
  heldOutPairs!: number;

  @Field(() => Float, { description: 'Held-out recall@1 of the identity map (scores without the adapter).' })
  baselineRecallAt1!: number;

  @Field(() => Float, { description: 'Held-out recall@1 of the kept map.' })
  recallAt1!: number;

  @Field(() => Int, { description: 'The epoch whose map was kept (0: none beat the identity).' })
  bestEpoch!: number;

  @Field(() => [AdapterEpoch])
  epochs!: AdapterEpoch[];
}

@ObjectType({ description: 'A query-side adapter: a learned map on question vectors (dhr adapt). Stored vectors are unchanged.' })
export class Adapter {
  @Field(() => String)
  name!: string;

  @Field(() => Boolean, { description: 'Retrieval applies it now.' })
  active!: boolean;

  @Field(() => Int)
  dimension!: number;

  @Field(() => Int, { description: 'Training pairs read.' })
  pairs!: number;

  @Field(() => [AdapterLevelTraining])
  levels!: AdapterLevelTraining[];

  @Field(() => GraphQLJSONObject, {
    description:
      'The training record as dhr adapt stored it (the pair files and kinds read, negatives per pair, and per level its pairs, every epoch, the baseline and the epoch kept), as `dhr adapters` prints it.',
  })
  training!: Record<string, unknown>;

  @Field(() => Date)
  createdAt!: Date;
}
