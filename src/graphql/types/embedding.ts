import { Field, Int, ObjectType } from 'type-graphql';
import { ENCODER_ROLES, type EncoderRole } from '../../encoders/types';
import { graphqlEnum } from './enums';

export const EncoderRoleEnum = graphqlEnum(ENCODER_ROLES, {
  name: 'EncoderRole',
  description: "DHR's four encoders: E_Q^φ (question→document), E_D^φ, E_Q^ψ (question→passage), E_P^ψ.",
});

@ObjectType({ description: 'A registered encoder and how much of the corpus it has embedded.' })
export class EmbeddingModel {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  dimension!: number;

  @Field(() => String, { description: "'onnxruntime-node', or 'external': vectors supplied by the client (registerExternalEmbeddingModel)." })
  runtime!: string;

  @Field(() => String, { nullable: true, description: "Where it loads from: 'use-lite' or a model folder." })
  source!: string | null;

  @Field(() => [EncoderRoleEnum], { description: 'DHR roles this model serves now (empty: registered, not active).' })
  roles!: EncoderRole[];

  @Field(() => Int, { description: 'Documents with a current embedding (summary unchanged since).' })
  documents!: number;

  @Field(() => Int, { description: 'Documents whose embedding predates their current content.' })
  staleDocuments!: number;

  @Field(() => Int)
  passages!: number;

  @Field(() => Int, { description: 'Passages with stored sentence vectors of this model (answer highlights read them instead of encoding).' })
  sentencePassages!: number;
}

@ObjectType({ description: 'What embedding did as part of a mutation.' })
export class EmbedResult {
  @Field(() => Int)
  documents!: number;

  @Field(() => Int)
  passages!: number;

  @Field(() => Int, { description: 'Texts cut to their role’s token budget.' })
  truncated!: number;
}
