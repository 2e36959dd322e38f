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
      'documents(after: String, first: Int, source: String, titleContains: String): DocumentConnection!',
      'section(id: ID!): Section',
      'passage(id: ID!): Passage',
      'ingestDocuments(documents: [DocumentInput!]!, model: String): IngestResult!',
      'deleteDocument(id: ID!): Boolean!',
      'passages(after: String, first: Int): PassageConnection!',
    ]) {
      expect(sdl).toContain(fragment);
    }
  });
});
