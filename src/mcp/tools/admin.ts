import { z } from 'zod';
import { badUserInput, notFound } from '../../errors';
import { parseId, toGlobalId } from '../../graphql/ids';
import { SOURCE_FIELDS } from '../../ingest/formats';
import type { DocumentInput } from '../../ingest/types';
import { queueIngestJob } from '../../pipeline/jobs/ingest-job';
import { getIngestJob, ingestJobOutcomes, type IngestJobRow } from '../../store/ingest-jobs';
import { defineTool } from '../tool';

/** Outcomes job_status lists (failures are always listed whole): an agent's reading, not an export. */
const MAX_OUTCOMES = 100;

const jobOf = (job: IngestJobRow) => ({
  id: String(job.id),
  status: job.status,
  documents: { done: job.documentsDone, total: job.documentsTotal },
  passages: job.passagesDone,
  created: job.created,
  updated: job.updated,
  unchanged: job.unchanged,
  failed: job.failed,
  error: job.error,
});

export const ingest = defineTool({
  name: 'ingest',
  title: 'Ingest documents',
  description: `Queues documents given as text in one of the ingest formats (${SOURCE_FIELDS.join(', ')}) as a durable ingest job and returns it at once; the server's job workers write, index and embed them (job_status follows it). A document's headings become its title tree; a known key with new content replaces the old one.`,
  role: 'admin',
  readOnly: false,
  input: z.strictObject({
    documents: z
      .array(
        z.strictObject({
          format: z.enum(SOURCE_FIELDS as [string, ...string[]]).describe('how text is written'),
          text: z.string().min(1).describe('the whole document in that format'),
          key: z.string().min(1).max(2000).optional().describe('a stable key: ingesting the same key again replaces the document (default: its title)'),
          title: z.string().max(2000).optional().describe('the title, where the text gives none'),
          source: z.string().max(500).optional().describe('where the document comes from (list_documents filters by it)'),
          metadata: z.record(z.string(), z.unknown()).optional().describe('JSON metadata stored with the document'),
        }),
      )
      .min(1)
      .describe('the documents, one job'),
  }),
  async run(ctx, args) {
    if (args.documents.length > ctx.config.maxIngestBatch) {
      throw badUserInput(`documents has ${args.documents.length} items, over the limit of ${ctx.config.maxIngestBatch} per request`, 'documents');
    }
    const inputs = args.documents.map((d): DocumentInput => ({ [d.format]: d.text, key: d.key, title: d.title, source: d.source, metadata: d.metadata }));
    const job = await queueIngestJob(ctx.db, inputs, ctx.config.ingest);
    // Workers of this process start on it now rather than at their next poll.
    ctx.models?.jobQueued();
    return { job: jobOf(job) };
  },
});

export const jobStatus = defineTool({
  name: 'job_status',
  title: 'Ingest job status',
  description: `An ingest job's progress (queued, running, succeeded, failed, cancelled), every failed document with its message, and the outcomes of the first ${MAX_OUTCOMES} documents done (their document ids).`,
  role: 'admin',
  readOnly: true,
  input: z.strictObject({ id: z.union([z.string().min(1).max(20), z.number().int().positive()]).describe('the job id ingest returned') }),
  async run(ctx, args) {
    const id = parseId(args.id, 'id');
    const job = await getIngestJob(ctx.db, id);
    if (!job) throw notFound(`no ingest job has id ${id}`, 'id');
    const outcomes = await ingestJobOutcomes(ctx.db, id);
    const shown = (o: (typeof outcomes)[number]) => ({
      index: o.index,
      status: o.status,
      key: o.key,
      documentId: o.documentId === null ? null : toGlobalId('Document', o.documentId),
      passages: o.passages,
      ...(o.message ? { message: o.message } : {}),
    });
    return {
      job: jobOf(job),
      failures: outcomes.filter((o) => o.status === 'failed').map(shown),
      outcomes: outcomes.slice(0, MAX_OUTCOMES).map(shown),
      outcomesLeftOut: Math.max(0, outcomes.length - MAX_OUTCOMES),
    };
  },
});
