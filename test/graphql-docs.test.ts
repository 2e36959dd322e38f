import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { packageRoot } from '../src/paths';

/** docs/graphql.md lists every root field of the schema, queries and mutations, and no other. */
describe('the GraphQL reference page', () => {
  it('names every query and mutation of the schema', async () => {
    const schema = await buildGraphQLSchema();
    const page = readFileSync(join(packageRoot(), 'docs', 'graphql.md'), 'utf8');
    const from = page.indexOf('## Every query and mutation\n');
    expect(from).toBeGreaterThan(0);
    const listed = [...page.slice(from).matchAll(/^\| `(\w+)` \| /gm)].map((m) => m[1]).sort();
    const fields = [schema.getQueryType()!, schema.getMutationType()!].flatMap((t) => Object.keys(t.getFields())).sort();
    expect(listed).toEqual(fields);
  });
});
