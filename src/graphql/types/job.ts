import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { JOB_SCOPES, JOB_STATUSES, type JobScope, type JobStatus } from '../../store/jobs';
import { graphqlEnum } from './enums';
import { withIngestCounts } from './ingest-counts';

export const ReembedScope = graphqlEnum(JOB_SCOPES, {
  name: 'ReembedScope',
  description:
    'ALL: every document and passage; STALE: those missing or changed for the model (a passage whose sentence vectors are missing too); DOCUMENTS: the listed documents.',
});

export const JobStatusEnum = graphqlEnum(JOB_STATUSES, { name: 'JobStatus' });

@ObjectType({ description: 'Progress of one level (documents or passages) of a job.' })
export class LevelProgress {
  @Field(() => Int)
  done!: number;

  @Field(() => Int, { description: 'Planned so far: grows when documents arrive during the job; ends at what exists.' })
  total!: number;
}

/** When a job (re-embedding or ingest) was queued, started, finished and last moved: one declaration for both (type-graphql inherits a decorated base class's fields; unreferenced, it emits no type of its own). */
@ObjectType()
abstract class JobTimes {
  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  startedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  finishedAt!: Date | null;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType({ description: 'A durable re-embedding job: documents first, then passages, in batches any worker may claim.' })
export class EmbeddingJob extends JobTimes {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'The embedding model being written.' })
  model!: string;

  @Field(() => Int, { description: "That model's integer id in the database (as `dhr jobs` lists it)." })
  modelId!: number;

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
}

@ObjectType({ description: 'Passages an ingest job has written, and how many it will write in all.' })
export class IngestPassageProgress {
  @Field(() => Int)
  done!: number;

  @Field(() => Int, {
    nullable: true,
    description: 'Exact once every document is done; before, estimated from the passages per byte of the documents done so far (null before the first batch).',
  })
  total!: number | null;

  @Field(() => Boolean, { description: 'Whether total is exact.' })
  exact!: boolean;
}

@ObjectType({
  description:
    'A durable ingest job: a large ingestDocuments, or startIngest, stores its documents and returns at once; job workers write them a batch at a time (rows, outcomes and progress in one transaction), so a restart resumes where it stopped.',
})
export class IngestJob extends withIngestCounts(JobTimes) {
  @Field(() => ID)
  id!: string;

  @Field(() => JobStatusEnum, {
    description: 'QUEUED, RUNNING, then SUCCEEDED (bad documents fail alone: see failed and outcomes), FAILED (error) or CANCELLED.',
  })
  status!: JobStatus;

  @Field(() => LevelProgress, { description: 'Documents done (written, unchanged or failed) of those given.' })
  documents!: LevelProgress;

  @Field(() => IngestPassageProgress)
  passages!: IngestPassageProgress;

  @Field(() => Float, { nullable: true, description: 'Documents per second since the job started.' })
  documentsPerSecond!: number | null;

  @Field(() => Float, { nullable: true, description: 'Passages written per second since the job started.' })
  passagesPerSecond!: number | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Seconds left, from the bytes of the documents still waiting at the rate so far; null before the first batch or after the end.',
  })
  etaSeconds!: number | null;

  @Field(() => String, { nullable: true, description: 'Why the job failed as a whole (a batch that kept failing, an encoder that cannot run).' })
  error!: string | null;
}
