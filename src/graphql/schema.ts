import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { authChecker } from './auth';
import { AdapterResolver } from './resolvers/adapter';
import { RetrievalContextResolver } from './resolvers/context';
import { DocumentConnectionResolver, DocumentResolver } from './resolvers/document';
import { EmbeddingModelResolver } from './resolvers/embedding';
import { IngestFormatResolver } from './resolvers/formats';
import { IngestJobResolver, IngestResolver } from './resolvers/ingest';
import { JobResolver } from './resolvers/job';
import { ApiKeyResolver } from './resolvers/key';
import { LinkResolver } from './resolvers/link';
import { NodeResolver } from './resolvers/node';
import { PassageResolver } from './resolvers/passage';
import { RetrievalResolver, ScoredDocumentResolver, ScoredPassageResolver } from './resolvers/retrieval';
import { SectionResolver } from './resolvers/section';
import { RetrievalSettingsResolver } from './resolvers/settings';
import { TrainingResolver } from './resolvers/training';

export const resolvers = [
  DocumentResolver,
  DocumentConnectionResolver,
  SectionResolver,
  PassageResolver,
  LinkResolver,
  NodeResolver,
  IngestResolver,
  IngestFormatResolver,
  IngestJobResolver,
  RetrievalSettingsResolver,
  EmbeddingModelResolver,
  JobResolver,
  RetrievalResolver,
  RetrievalContextResolver,
  ScoredPassageResolver,
  ScoredDocumentResolver,
  ApiKeyResolver,
  TrainingResolver,
  AdapterResolver,
] as const;

let built: Promise<GraphQLSchema> | undefined;

/** Built once per process: type-graphql's metadata is global. */
export function buildGraphQLSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({ resolvers: [...resolvers], validate: false, authChecker });
  return built;
}

/** The checked-in schema.graphql: sorted, so diffs show real changes only. */
export async function printGraphQLSchema(): Promise<string> {
  return `${printSchema(lexicographicSortSchema(await buildGraphQLSchema()))}\n`;
}
