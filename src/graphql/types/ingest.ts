import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { INGEST_STATUSES, type IngestStatus } from '../../pipeline/ingest';
import { EmbedResult } from './embedding';
import { graphqlEnum } from './enums';

// Titles are nullable here on purpose: a missing title is reported per document by ingest,
// so one bad document does not make GraphQL reject the whole batch.
@InputType({ description: 'A section of a JSON title tree.' })
export class SectionInput {
  @Field(() => String, { nullable: true })
  title?: string | null;

  @Field(() => String, { nullable: true })
  text?: string | null;

  @Field(() => [SectionInput], { nullable: true })
  sections?: SectionInput[] | null;
}

@InputType({
  description:
    'One document: a JSON title tree (abstract + sections), or Markdown (headings are the tree), or plain text (all abstract).',
})
export class DocumentInput {
  @Field(() => String, { nullable: true, description: 'Stable identifier; defaults to the title. Same key replaces.' })
  key?: string | null;

  @Field(() => String, { nullable: true, description: "Required unless the Markdown opens with a single '# Title'." })
  title?: string | null;

  @Field(() => String, { nullable: true })
  abstract?: string | null;

  @Field(() => [SectionInput], { nullable: true })
  sections?: SectionInput[] | null;

  @Field(() => String, { nullable: true })
  markdown?: string | null;

  @Field(() => String, { nullable: true })
  text?: string | null;

  @Field(() => String, { nullable: true })
  source?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  metadata?: Record<string, unknown> | null;
}

export const IngestStatusEnum = graphqlEnum(INGEST_STATUSES, { name: 'IngestStatus' });

@ObjectType()
export class IngestOutcome {
  @Field(() => Int, { description: 'Position of the document in the input list.' })
  index!: number;

  @Field(() => String, { nullable: true })
  key!: string | null;

  @Field(() => String, { nullable: true })
  title!: string | null;

  @Field(() => IngestStatusEnum)
  status!: IngestStatus;

  @Field(() => ID, { nullable: true })
  documentId!: number | null;

  @Field(() => Int, { description: 'Passages written (0 when unchanged or failed).' })
  passages!: number;

  @Field(() => String, { nullable: true, description: 'Why it failed, naming the document and the problem.' })
  message!: string | null;
}

@ObjectType()
export class IngestResult {
  @Field(() => Int)
  created!: number;

  @Field(() => Int)
  updated!: number;

  @Field(() => Int)
  unchanged!: number;

  @Field(() => Int)
  failed!: number;

  @Field(() => Int)
  passages!: number;

  @Field(() => [IngestOutcome])
  outcomes!: IngestOutcome[];

  @Field(() => EmbedResult, { nullable: true, description: 'Embeddings computed for created and updated documents (null when embedding is off).' })
  embedded!: EmbedResult | null;
}
