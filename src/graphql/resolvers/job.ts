import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { badUserInput } from '../../errors';
import { cancelJob, createJob, getJob, listJobs, type JobRow, type JobScope, type JobStatus } from '../../store/jobs';
import type { Role } from '../auth';
import type { Context } from '../context';
import { parseId, parseNodeId } from '../ids';
import { EmbeddingJob, JobStatusEnum, ReembedScope } from '../types/job';

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
    @Arg('scope', () => ReembedScope, { defaultValue: 'ALL' }) scope: JobScope,
    @Arg('documentIds', () => [ID], { nullable: true }) documentIds?: string[] | null,
  ): Promise<EmbeddingJob> {
    if (documentIds && documentIds.length > ctx.config.maxIngestBatch) {
      throw badUserInput(`documentIds has ${documentIds.length} items, over the limit of ${ctx.config.maxIngestBatch}`, 'documentIds');
    }
    const ids = documentIds?.map((id) => parseNodeId(id, 'Document', 'documentIds'));
    const job = await createJob(ctx.db, { model, scope, documentIds: ids ? [...new Set(ids)] : undefined, batchSize: ctx.config.jobBatchSize });
    ctx.models?.jobQueued();
    return toEmbeddingJob(job);
  }

  @Authorized<Role>('admin')
  @Mutation(() => EmbeddingJob, { description: 'Stops a queued or running job; what it wrote stays (an inactive model’s vectors).' })
  async cancelJob(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<EmbeddingJob> {
    return toEmbeddingJob(await cancelJob(ctx.db, parseId(id, 'id')));
  }

  @Query(() => [EmbeddingJob], { description: 'Jobs, newest first.' })
  async jobs(@Ctx() ctx: Context, @Arg('status', () => JobStatusEnum, { nullable: true }) status?: JobStatus | null): Promise<EmbeddingJob[]> {
    return (await listJobs(ctx.db, status ?? undefined)).map(toEmbeddingJob);
  }

  @Query(() => EmbeddingJob, { nullable: true })
  async job(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<EmbeddingJob | null> {
    const job = await getJob(ctx.db, parseId(id, 'id'));
    return job ? toEmbeddingJob(job) : null;
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
    modelId: job.modelId,
    scope: job.scope,
    documentIds: job.documentIds.map(String),
    status: job.status,
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
