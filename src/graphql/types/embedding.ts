import { Field, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum EncoderRoleName {
  QUESTION_DOCUMENT = 'questionDocument',
  DOCUMENT = 'document',
  QUESTION_PASSAGE = 'questionPassage',
  PASSAGE = 'passage',
}
registerEnumType(EncoderRoleName, {
  name: 'EncoderRole',
  description: "DHR's four encoders: E_Q^φ (question→document), E_D^φ, E_Q^ψ (question→passage), E_P^ψ.",
});

@ObjectType({ description: 'A registered encoder and how much of the corpus it has embedded.' })
export class EmbeddingModel {
  @Field(() => String)
  name!: string;

  @Field(() => Int)
  dimension!: number;

  @Field(() => String)
  runtime!: string;

  @Field(() => [EncoderRoleName], { description: 'Roles this model serves in the running server.' })
  roles!: EncoderRoleName[];

  @Field(() => Int, { description: 'Documents with a current embedding (summary unchanged since).' })
  documents!: number;

  @Field(() => Int, { description: 'Documents whose embedding predates their current content.' })
  staleDocuments!: number;

  @Field(() => Int)
  passages!: number;
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
