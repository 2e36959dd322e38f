import { GraphQLError } from 'graphql';
import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { cancelJob, createJob, getJob, JobError, listJobs, type JobRow, type JobStatus } from '../../store/jobs';
import type { Role } from '../auth';
import type { Context } from '../context';
import { badUserInput } from '../errors';
import { parseId } from '../ids';
import { EmbeddingJob, JobStatusName, ReembedScope } from '../types/job';

@Resolver(() => EmbeddingJob)
export class JobResolver {
  @Authorized<Role>('admin')
  @Mutation(() => EmbeddingJob, {
    description:
      'Queues a durable job that writes embeddings of one model: documents first, then passages. Retrieval keeps using the active models meanwhile; activate the new one when the job has succeeded.',
  })
  async reembed(
    @Ctx() ctx: Context,
    @Arg('model', () => String) model: string,
    @Arg('scope', () => ReembedScope, { defaultValue: ReembedScope.ALL }) scope: ReembedScope,
    @Arg('documentIds', () => [ID], { nullable: true }) documentIds?: string[] | null,
  ): Promise<EmbeddingJob> {
    if (documentIds && documentIds.length > ctx.config.maxIngestBatch) {
      throw badUserInput(`documentIds has ${documentIds.length} items, over the limit of ${ctx.config.maxIngestBatch}`, 'documentIds');
    }
    const ids = documentIds?.map((id) => parseId(id, 'documentIds'));
    const job = await jobCall(() =>
      createJob(ctx.db, { model, scope, documentIds: ids ? [...new Set(ids)] : undefined, batchSize: ctx.config.jobBatchSize }),
    );
    ctx.models?.jobQueued();
    return toEmbeddingJob(job);
  }

  @Authorized<Role>('admin')
  @Mutation(() => EmbeddingJob, { description: 'Stops a queued or running job; what it wrote stays (an inactive model’s vectors).' })
  async cancelJob(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<EmbeddingJob> {
    return toEmbeddingJob(await jobCall(() => cancelJob(ctx.db, parseId(id, 'id'))));
  }

  @Query(() => [EmbeddingJob], { description: 'Jobs, newest first.' })
  async jobs(
    @Ctx() ctx: Context,
    @Arg('status', () => JobStatusName, { nullable: true }) status?: JobStatusName | null,
  ): Promise<EmbeddingJob[]> {
    return (await listJobs(ctx.db, (status ?? undefined) as JobStatus | undefined)).map(toEmbeddingJob);
  }

  @Query(() => EmbeddingJob, { nullable: true })
  async job(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<EmbeddingJob | null> {
    const job = await getJob(ctx.db, parseId(id, 'id'));
    return job ? toEmbeddingJob(job) : null;
  }
}

async function jobCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof JobError) {
      throw new GraphQLError(error.message, { extensions: { code: error.code, ...(error.argument ? { argument: error.argument } : {}) } });
    }
    throw error;
  }
}

export function toEmbeddingJob(job: JobRow): EmbeddingJob {
  const done = job.documentsDone + job.passagesDone;
  const total = job.documentsTotal + job.passagesTotal;
  const end = job.finishedAt ?? job.updatedAt;
  const seconds = job.startedAt ? (end.getTime() - job.startedAt.getTime()) / 1000 : 0;
  const rate = seconds > 0 && done > 0 ? done / seconds : null;
  const open = job.status === 'queued' || job.status === 'running';
  return {
    id: String(job.id),
    model: job.model,
    scope: job.scope as ReembedScope,
    documentIds: job.documentIds.map(String),
    status: job.status as JobStatusName,
    documents: { done: job.documentsDone, total: job.documentsTotal },
    passages: { done: job.passagesDone, total: job.passagesTotal },
    ratePerSecond: rate,
    etaSeconds: open && rate ? Math.max(0, total - done) / rate : null,
    error: job.error,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    updatedAt: job.updatedAt,
  };
}
