import { Arg, Authorized, Ctx, Mutation, Resolver } from 'type-graphql';
import type { DocumentInput as IngestInput, SectionInput as IngestSection } from '../../ingest/types';
import { embedPending } from '../../store/embed';
import { ingestDocuments } from '../../store/ingest';
import { indexLexical } from '../../store/lexical';
import type { Role } from '../auth';
import type { Context } from '../context';
import { badUserInput } from '../errors';
import { DocumentInput, IngestResult, IngestStatus, SectionInput } from '../types/ingest';

@Resolver()
export class IngestResolver {
  @Authorized<Role>('admin')
  @Mutation(() => IngestResult, {
    description:
      'Ingests documents, each in its own transaction: a bad document fails alone with a message; a known key with new content replaces the old; the same content is a no-op.',
  })
  async ingestDocuments(
    @Ctx() ctx: Context,
    @Arg('documents', () => [DocumentInput]) documents: DocumentInput[],
  ): Promise<IngestResult> {
    if (documents.length > ctx.config.maxIngestBatch) {
      throw badUserInput(
        `documents has ${documents.length} items, over the limit of ${ctx.config.maxIngestBatch} per request`,
        'documents',
      );
    }
    const summary = await ingestDocuments(ctx.db, documents.map(toIngestInput), ctx.config.ingest);
    const written = summary.outcomes
      .filter((o) => o.status === 'created' || o.status === 'updated')
      .map((o) => o.documentId as number);
    await indexLexical(ctx.db, written);
    // Read after the documents committed (see writeDocumentIn's lock): an activation that landed
    // since the last snapshot must get their vectors, or it would serve without them.
    const targets = ctx.config.embedOnIngest ? await ctx.models?.current({ fresh: true }) : undefined;
    const embedded = targets
      ? await embedPending(ctx.db, targets, { documentIds: written, batchSize: ctx.config.embedBatchSize })
      : null;
    return {
      ...summary,
      outcomes: summary.outcomes.map((o) => ({ ...o, status: o.status as IngestStatus })),
      embedded,
    };
  }
}

/** GraphQL gives null for absent fields; the ingest contract uses undefined. */
function toIngestInput(input: DocumentInput): IngestInput {
  return {
    key: input.key ?? undefined,
    title: input.title ?? undefined,
    abstract: input.abstract ?? undefined,
    sections: input.sections?.map(toIngestSection),
    markdown: input.markdown ?? undefined,
    text: input.text ?? undefined,
    source: input.source ?? undefined,
    metadata: input.metadata ?? undefined,
  };
}

function toIngestSection(section: SectionInput): IngestSection {
  return {
    title: section.title as string,
    text: section.text ?? undefined,
    sections: section.sections?.map(toIngestSection),
  };
}
