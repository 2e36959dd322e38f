import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';

export enum ReembedScope {
  ALL = 'ALL',
  STALE = 'STALE',
  DOCUMENTS = 'DOCUMENTS',
}
registerEnumType(ReembedScope, {
  name: 'ReembedScope',
  description: 'ALL: every document and passage; STALE: those missing or changed for the model; DOCUMENTS: the listed documents.',
});

export enum JobStatusName {
  QUEUED = 'queued',
  RUNNING = 'running',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
  CANCELLED = 'cancelled',
}
registerEnumType(JobStatusName, { name: 'JobStatus' });

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
  scope!: ReembedScope;

  @Field(() => [ID])
  documentIds!: string[];

  @Field(() => JobStatusName)
  status!: JobStatusName;

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
