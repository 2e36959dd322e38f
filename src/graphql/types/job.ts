import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { JOB_SCOPES, JOB_STATUSES, type JobScope, type JobStatus } from '../../store/jobs';
import { graphqlEnum } from './enums';

export const ReembedScope = graphqlEnum(JOB_SCOPES, {
  name: 'ReembedScope',
  description: 'ALL: every document and passage; STALE: those missing or changed for the model (a passage whose sentence vectors are missing too); DOCUMENTS: the listed documents.',
});

export const JobStatusEnum = graphqlEnum(JOB_STATUSES, { name: 'JobStatus' });

@ObjectType({ description: 'Progress of one level (documents or passages) of a job.' })
export class LevelProgress {
  @Field(() => Int)
  done!: number;

  @Field(() => Int, { description: 'Planned so far: grows when documents arrive during the job; ends at what exists.' })
  total!: number;
}

@ObjectType({ description: 'A durable re-embedding job: documents first, then passages, in batches any worker may claim.' })
export class EmbeddingJob {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'The embedding model being written.' })
  model!: string;

  @Field(() => ReembedScope)
  scope!: JobScope;

  @Field(() => [ID])
  documentIds!: string[];

  @Field(() => JobStatusEnum)
  status!: JobStatus;

  @Field(() => LevelProgress)
  documents!: LevelProgress;

  @Field(() => LevelProgress)
  passages!: LevelProgress;

  @Field(() => Float, { nullable: true, description: 'Items (documents + passages) per second since the job started.' })
  ratePerSecond!: number | null;

  @Field(() => Float, { nullable: true, description: 'Seconds left at that rate; null before the first batch or after the end.' })
  etaSeconds!: number | null;

  @Field(() => String, { nullable: true })
  error!: string | null;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  startedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => Date)
  updatedAt!: Date;
}
