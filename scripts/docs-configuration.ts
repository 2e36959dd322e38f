/**
 * Writes docs/configuration.md from the table of environment variables (src/config/variables.ts):
 * `npx tsx scripts/docs-configuration.ts`. test/configuration.test.ts fails when the page is stale.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationPage } from '../src/config/variables';
import { packageRoot } from '../src/paths';

const path = join(packageRoot(), 'docs', 'configuration.md');
writeFileSync(path, configurationPage());
console.log(`wrote ${path}`);
