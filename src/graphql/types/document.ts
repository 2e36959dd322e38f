import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import type { DocumentRow } from '../../store/rows';
import { Node } from './node';

/** The object is the document row, as Passage is the passage row (types/passage.ts). */
export interface Document extends DocumentRow {}

@ObjectType({ description: 'A document: the root of a title tree.', implements: Node })
export class Document {
  @Field(() => String, { description: "The caller's stable identifier (defaults to the title)." })
  key!: string;

  @Field(() => String)
  title!: string;

  @Field(() => String, { description: 'Text before the first heading.' })
  abstract!: string;

  @Field(() => String, { description: 'The document summary DHR embeds: "title, abstract, table of contents" (pre-order, comma-separated).' })
  summary!: string;

  @Field(() => String, { nullable: true })
  source!: string | null;

  @Field(() => GraphQLJSONObject)
  metadata!: Record<string, unknown>;

  @Field(() => String, { description: 'sha256 of the ingested content and splitting options; re-ingesting the same hash is a no-op.' })
  contentHash!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;
}

@ObjectType({
  description: 'Documents of ingest jobs (queued or running) not written yet: in no other count of stats or embeddingModels until a batch writes them.',
})
export class QueuedIngest {
  @Field(() => Int, { description: 'Ingest jobs queued or running.' })
  jobs!: number;

  @Field(() => Int, { description: 'Their documents not written yet.' })
  documents!: number;

  @Field(() => Float, { description: 'Those documents’ size, in bytes of their JSON.' })
  bytes!: number;
}

@ObjectType({
  description:
    'Work an ingest has not finished yet: done by the next ingest, the server at start, or a job worker. The corpus is all in when every count here, queued ones included, is 0.',
})
export class PendingWork {
  @Field(() => QueuedIngest, { description: 'Documents still waiting in ingest jobs: not yet passages, so not in the counts beside this one.' })
  queued!: QueuedIngest;

  @Field(() => Int, { description: 'Passages without their full-text index (invisible to LEXICAL and BM25).' })
  unindexedPassages!: number;

  @Field(() => Int, { description: 'Passages without a vector of the active passage model.' })
  unembeddedPassages!: number;

  @Field(() => Int, { description: 'Documents without a current vector of the active document model.' })
  unembeddedDocuments!: number;
}

@ObjectType()
export class StoreStats {
  @Field(() => Int)
  documents!: number;

  @Field(() => Int)
  sections!: number;

  @Field(() => Int)
  passages!: number;

  @Field(() => Int)
  links!: number;

  @Field(() => Int, { description: 'Links whose target names a stored document.' })
  resolvedLinks!: number;

  @Field(() => PendingWork)
  pending!: PendingWork;

  @Field(() => String, {
    description:
      "How passage BM25 finds its candidates: 'pg_textsearch' (the store's BM25 index, on PGlite; every score still the postings' exact BM25) or 'postings' (the SQL postings: PostgreSQL 15, Citus).",
  })
  bm25Candidates!: string;
}
