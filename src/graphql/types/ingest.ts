import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int, ObjectType } from 'type-graphql';
import { SOURCE_FIELDS, SOURCE_FORMATS } from '../../ingest/formats';
import type { SourceField } from '../../ingest/types';
import { INGEST_STATUSES, type IngestStatus } from '../../pipeline/ingest';
import { EmbedResult } from './embedding';
import { graphqlEnum } from './enums';
import { withIngestCounts } from './ingest-counts';
import { IngestJob } from './job';

@InputType({
  description:
    'A passage as the client split it (bring your own vectors): kept whole, never split again; its vector is for the external passage model (retrieve compares questionVector with it).',
})
export class PassageInput {
  @Field(() => String, { nullable: true, description: 'Its text (required; reported per document when missing).' })
  text?: string | null;

  @Field(() => [Float], {
    nullable: true,
    description: 'Its vector: required, of the model’s dimension, when the passage model is external (or ingestDocuments names one); refused otherwise.',
  })
  vector?: number[] | null;
}

// Titles are nullable here on purpose: a missing title is reported per document by ingest,
// so one bad document does not make GraphQL reject the whole batch.
@InputType({ description: 'A section of a JSON title tree.' })
export class SectionInput {
  @Field(() => String, { nullable: true })
  title?: string | null;

  @Field(() => String, { nullable: true, description: 'Its own text, split into passages by the server. Or passages, not both.' })
  text?: string | null;

  @Field(() => [PassageInput], {
    nullable: true,
    description: 'Its own text as the client’s passages (each kept whole, with its vector for an external model). Or text, not both.',
  })
  passages?: PassageInput[] | null;

  @Field(() => [SectionInput], { nullable: true })
  sections?: SectionInput[] | null;
}

@InputType({
  description: `One document: a JSON title tree (abstract + sections), or its source in one format (${SOURCE_FIELDS.join(', ')}).`,
})
export class DocumentInput {
  @Field(() => String, { nullable: true, description: 'Stable identifier; defaults to the title. Same key replaces.' })
  key?: string | null;

  @Field(() => String, { nullable: true, description: 'Required unless the source gives one (a lone leading Markdown `# Title`, an HTML <title>…).' })
  title?: string | null;

  @Field(() => String, { nullable: true })
  abstract?: string | null;

  @Field(() => [PassageInput], { nullable: true, description: 'The abstract as the client’s passages (instead of abstract).' })
  passages?: PassageInput[] | null;

  @Field(() => [SectionInput], { nullable: true })
  sections?: SectionInput[] | null;

  @Field(() => [Float], {
    nullable: true,
    description:
      'The document’s (summary) vector for the external document model: required, of its dimension, when the document model is external (or ingestDocuments names one); refused otherwise.',
  })
  vector?: number[] | null;

  @Field(() => String, { nullable: true })
  source?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  metadata?: Record<string, unknown> | null;
}

// One field per ingest format, from the table (src/ingest/formats.ts), described by it.
export interface DocumentInput extends Partial<Record<SourceField, string | null>> {}
for (const field of SOURCE_FIELDS) {
  Field(() => String, { nullable: true, description: SOURCE_FORMATS[field].description })(DocumentInput.prototype, field);
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

  @Field(() => [String], {
    description:
      'What ingest read other than as written, the document still going in: a heading without text (`### <CR>`, `<h2><a id="x"></a></h2>`) titled by its source or merged into the section before it. Empty when nothing.',
  })
  warnings!: string[];
}

@ObjectType()
export class IngestResult extends withIngestCounts(class {}) {
  @Field(() => Int)
  passages!: number;

  @Field(() => [IngestOutcome])
  outcomes!: IngestOutcome[];

  @Field(() => EmbedResult, { nullable: true, description: 'Embeddings computed for created and updated documents (null when embedding is off).' })
  embedded!: EmbedResult | null;

  @Field(() => IngestJob, {
    nullable: true,
    description:
      'Set when the ingest was too large to answer within the request (over INGEST_JOB_DOCUMENTS documents or INGEST_JOB_BYTES bytes): it became this job, and the counts and outcomes above are empty; follow it with ingestJob(id). Null when the ingest is done.',
  })
  job!: IngestJob | null;
}
