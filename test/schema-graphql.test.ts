import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { printGraphQLSchema } from '../src/graphql/schema';
import { packageRoot } from '../src/paths';

describe('schema.graphql', () => {
  it('is what the type-graphql classes emit (run `npm run schema:emit` after changing them)', async () => {
    const checkedIn = readFileSync(join(packageRoot(), 'schema.graphql'), 'utf8');
    expect(checkedIn).toBe(await printGraphQLSchema());
  });

  it('keeps the names clients rely on', async () => {
    const sdl = await printGraphQLSchema();
    for (const fragment of [
      'document(id: ID, key: String): Document',
      'documents(after: String, before: String, first: Int, last: Int, source: String, titleContains: String): DocumentConnection!',
      'section(id: ID!): Section',
      'passage(id: ID!): Passage',
      'ingestDocuments(documents: [DocumentInput!]!, model: String): IngestResult!',
      'deleteDocument(id: ID!): Boolean!',
      'passages(after: String, before: String, first: Int, last: Int): PassageConnection!',
      'node(id: ID!): Node',
      'nodes(ids: [ID!]!): [Node]!',
      'type Document implements Node',
      'type Section implements Node',
      'type Passage implements Node',
      'databaseId: Int!',
    ]) {
      expect(sdl).toContain(fragment);
    }
  });
});
