import { Arg, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { SOURCE_FIELDS } from '../../ingest/formats';
import type { DocumentInput as IngestInput, PassageInput as IngestPassage, SectionInput as IngestSection } from '../../ingest/types';
import { badUserInput } from '../../errors';
import { ingest } from '../../pipeline/ingest';
import { checkSuppliedVectors } from '../../ingest/vectors';
import { queueIngestJob } from '../../pipeline/jobs/ingest-job';
import { suppliedVectorModels } from '../../pipeline/supplied-vectors';
import {
  cancelIngestJob,
  getIngestJob,
  ingestJobOutcomes,
  listIngestJobs,
  type IngestJobOutcomeStatus,
  type IngestJobRow,
  type IngestJobStatus,
} from '../../store/ingest-jobs';
import type { Role } from '../auth';
import type { Context } from '../context';
import { parseId } from '../ids';
import { DocumentInput, IngestOutcome, IngestResult, IngestStatusEnum, PassageInput, SectionInput } from '../types/ingest';
import { IngestJob, JobStatusEnum } from '../types/job';

@Resolver()
export class IngestResolver {
  @Authorized<Role>('admin')
  @Mutation(() => IngestResult, {
    description:
      'Ingests documents: fewer than 16 each in its own transaction, more in batches (one transaction and one BM25 update per batch; a failed batch is written again one document at a time): a bad document fails alone with a message; a known key with new content replaces the old; the same content is a no-op. Documents may bring their own vectors (DocumentInput.vector, passages[].vector) for an external model: the active document and passage models that are external, or the one `model` names (every document and passage then needs its vector; to fill a model before it is activated). Over INGEST_JOB_DOCUMENTS (64) documents or INGEST_JOB_BYTES (64 KiB) of their JSON, the ingest becomes a durable job and the answer comes at once with `job` set (see startIngest).',
  })
  async ingestDocuments(
    @Ctx() ctx: Context,
    @Arg('documents', () => [DocumentInput]) documents: DocumentInput[],
    // Described in the mutation's description: an argument description would break the one-line signature clients grep for.
    @Arg('model', () => String, { nullable: true })
    model?: string | null,
  ): Promise<IngestResult> {
    checkBatch(ctx, documents);
    const inputs = documents.map(toIngestInput);
    const { fromDocuments, fromBytes } = ctx.config.ingestJob;
    // The bound keeps a synchronous answer well inside REQUEST_TIMEOUT_MS, so a request is never
    // cut while the server goes on ingesting unseen: larger ingests answer with a job at once.
    if (inputs.length > fromDocuments || Buffer.byteLength(JSON.stringify(inputs)) > fromBytes) {
      const job = await queueJob(ctx, inputs, model ?? undefined);
      return { created: 0, updated: 0, unchanged: 0, failed: 0, passages: 0, outcomes: [], embedded: null, job };
    }
    const { models } = ctx;
    const result = await ingest(ctx.writes, inputs, {
      ...ctx.config.ingest,
      // Fresh, not the cached snapshot: see writeDocumentIn's lock.
      embedWith: ctx.config.embedOnIngest && models ? () => models.current({ fresh: true }) : undefined,
      embedBatchSize: ctx.config.embedBatchSize,
      splitFor: models ? async () => (await models.current())?.encoders.byRole.passage : undefined,
      vectorsFor: async () => suppliedVectorModels(ctx.db, await models?.current({ fresh: true }), model ?? undefined),
    });
    return { ...result, job: null };
  }

  @Authorized<Role>('admin')
  @Mutation(() => IngestJob, {
    description:
      'Stores the documents as a durable ingest job and returns it at once, whatever their size (ingestDocuments does so above its bound; `model` as there). Job workers (JOB_WORKERS in the server, or dhr worker) write them a batch at a time, oldest job first, as ingestDocuments would: a bad document fails alone (outcomes), re-ingesting unchanged content is a no-op, and a restart resumes at the first document not done. An empty list is BAD_USER_INPUT.',
  })
  async startIngest(
    @Ctx() ctx: Context,
    @Arg('documents', () => [DocumentInput]) documents: DocumentInput[],
    // As ingestDocuments' model: the external model the documents' own vectors are for.
    @Arg('model', () => String, { nullable: true })
    model?: string | null,
  ): Promise<IngestJob> {
    checkBatch(ctx, documents);
    return queueJob(ctx, documents.map(toIngestInput), model ?? undefined);
  }

  @Authorized<Role>('admin')
  @Mutation(() => IngestJob, { description: 'Stops a queued or running ingest job after the batch in flight; the documents it wrote stay.' })
  async cancelIngestJob(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<IngestJob> {
    return toIngestJob(await cancelIngestJob(ctx.db, parseId(id, 'id')));
  }

  @Query(() => IngestJob, { nullable: true, description: 'An ingest job and its progress.' })
  async ingestJob(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<IngestJob | null> {
    const job = await getIngestJob(ctx.db, parseId(id, 'id'));
    return job ? toIngestJob(job) : null;
  }

  @Query(() => [IngestJob], { description: 'Ingest jobs, newest first.' })
  async ingestJobs(@Ctx() ctx: Context, @Arg('status', () => JobStatusEnum, { nullable: true }) status?: IngestJobStatus | null): Promise<IngestJob[]> {
    return (await listIngestJobs(ctx.db, status ?? undefined)).map(toIngestJob);
  }
}

@Resolver(() => IngestJob)
export class IngestJobResolver {
  @FieldResolver(() => [IngestOutcome], {
    description: 'The outcome of each document done so far, in the order given (status: FAILED for the failures and their messages).',
  })
  async outcomes(
    @Ctx() ctx: Context,
    @Root() job: IngestJob,
    @Arg('status', () => IngestStatusEnum, { nullable: true }) status?: IngestJobOutcomeStatus | null,
  ): Promise<IngestOutcome[]> {
    return ingestJobOutcomes(ctx.db, Number(job.id), status ?? undefined);
  }
}

function checkBatch(ctx: Context, documents: readonly DocumentInput[]): void {
  if (documents.length > ctx.config.maxIngestBatch) {
    throw badUserInput(`documents has ${documents.length} items, over the limit of ${ctx.config.maxIngestBatch} per request`, 'documents');
  }
}

/**
 * The documents' own vectors are checked now, as a synchronous ingest checks them (a bad or missing
 * one refuses the request, BAD_USER_INPUT naming it, and queues nothing); the job's batches write
 * them for the same model choice (`model`, or the active external models).
 */
async function queueJob(ctx: Context, inputs: IngestInput[], model: string | undefined): Promise<IngestJob> {
  checkSuppliedVectors(inputs, await suppliedVectorModels(ctx.db, await ctx.models?.current({ fresh: true }), model));
  const job = await queueIngestJob(ctx.db, inputs, ctx.config.ingest, model);
  // Workers of this process start on it now rather than at their next poll.
  ctx.models?.jobQueued();
  return toIngestJob(job);
}

export function toIngestJob(job: IngestJobRow): IngestJob {
  const end = job.finishedAt ?? job.updatedAt;
  const seconds = job.startedAt ? (end.getTime() - job.startedAt.getTime()) / 1000 : 0;
  const perSecond = (n: number) => (seconds > 0 && n > 0 ? n / seconds : null);
  const open = job.status === 'queued' || job.status === 'running';
  const exact = job.documentsDone === job.documentsTotal;
  const bytesPerSecond = perSecond(job.bytesDone);
  const estimate = job.bytesDone > 0 ? Math.round(job.passagesDone + (job.passagesDone / job.bytesDone) * (job.bytesTotal - job.bytesDone)) : null;
  return {
    id: String(job.id),
    status: job.status,
    documents: { done: job.documentsDone, total: job.documentsTotal },
    passages: { done: job.passagesDone, total: exact ? job.passagesDone : estimate, exact },
    created: job.created,
    updated: job.updated,
    unchanged: job.unchanged,
    failed: job.failed,
    documentsPerSecond: perSecond(job.documentsDone),
    passagesPerSecond: perSecond(job.passagesDone),
    etaSeconds: open && bytesPerSecond ? Math.max(0, job.bytesTotal - job.bytesDone) / bytesPerSecond : null,
    error: job.error,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    updatedAt: job.updatedAt,
  };
}

/** GraphQL gives null for absent fields; the ingest contract uses undefined. */
function toIngestInput(input: DocumentInput): IngestInput {
  return {
    key: input.key ?? undefined,
    title: input.title ?? undefined,
    abstract: input.abstract ?? undefined,
    sections: input.sections?.map(toIngestSection),
    passages: input.passages?.map(toIngestPassage),
    vector: input.vector ?? undefined,
    ...Object.fromEntries(SOURCE_FIELDS.map((f) => [f, input[f] ?? undefined])),
    source: input.source ?? undefined,
    metadata: input.metadata ?? undefined,
  };
}

function toIngestSection(section: SectionInput): IngestSection {
  return {
    title: section.title as string,
    text: section.text ?? undefined,
    passages: section.passages?.map(toIngestPassage),
    sections: section.sections?.map(toIngestSection),
  };
}

function toIngestPassage(passage: PassageInput): IngestPassage {
  return { text: passage.text as string, vector: passage.vector ?? undefined };
}
