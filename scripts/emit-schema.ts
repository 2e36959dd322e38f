// Writes schema.graphql from the type-graphql classes; test/schema-graphql.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { printGraphQLSchema } from '../src/graphql/schema';
import { packageRoot } from '../src/paths';

printGraphQLSchema().then(
  (sdl) => {
    writeFileSync(join(packageRoot(), 'schema.graphql'), sdl);
    console.log('wrote schema.graphql');
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
