import { Arg, Authorized, Ctx, Mutation, Resolver } from 'type-graphql';
import { SOURCE_FIELDS } from '../../ingest/formats';
import type { DocumentInput as IngestInput, PassageInput as IngestPassage, SectionInput as IngestSection } from '../../ingest/types';
import { badUserInput } from '../../errors';
import { ingest } from '../../pipeline/ingest';
import { suppliedVectorModels } from '../../pipeline/supplied-vectors';
import type { Role } from '../auth';
import type { Context } from '../context';
import { DocumentInput, IngestResult, PassageInput, SectionInput } from '../types/ingest';

@Resolver()
export class IngestResolver {
  @Authorized<Role>('admin')
  @Mutation(() => IngestResult, {
    description:
      'Ingests documents: fewer than 16 each in its own transaction, more in batches (one transaction and one BM25 update per batch; a failed batch is written again one document at a time): a bad document fails alone with a message; a known key with new content replaces the old; the same content is a no-op. Documents may bring their own vectors (DocumentInput.vector, passages[].vector) for an external model: the active document and passage models that are external, or the one `model` names (every document and passage then needs its vector; to fill a model before it is activated).',
  })
  async ingestDocuments(
    @Ctx() ctx: Context,
    @Arg('documents', () => [DocumentInput]) documents: DocumentInput[],
    // Described in the mutation's description: an argument description would break the one-line signature clients grep for.
    @Arg('model', () => String, { nullable: true })
    model?: string | null,
  ): Promise<IngestResult> {
    if (documents.length > ctx.config.maxIngestBatch) {
      throw badUserInput(
        `documents has ${documents.length} items, over the limit of ${ctx.config.maxIngestBatch} per request`,
        'documents',
      );
    }
    const { models } = ctx;
    const result = await ingest(ctx.db, documents.map(toIngestInput), {
      ...ctx.config.ingest,
      // Fresh, not the cached snapshot: see writeDocumentIn's lock.
      embedWith: ctx.config.embedOnIngest && models ? () => models.current({ fresh: true }) : undefined,
      embedBatchSize: ctx.config.embedBatchSize,
      splitFor: models ? async () => (await models.current())?.encoders.byRole.passage : undefined,
      vectorsFor: async () => suppliedVectorModels(ctx.db, await models?.current({ fresh: true }), model ?? undefined),
    });
    return result;
  }
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
