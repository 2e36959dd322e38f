/**
 * Writes the CIA World Factbook (the project's own importer, src/ingest/factbook.ts) as one JSON
 * array of documents that `dhr ingest` accepts, so a private training store can be built without
 * touching any other store:
 *   npx tsx training/factbook-json.ts /tmp/train-store/factbook.json [limit]
 */
import { writeFileSync } from 'node:fs';
import { readFactbook } from '../src/ingest/factbook';

const out = process.argv[2];
if (!out) {
  console.error('usage: npx tsx training/factbook-json.ts OUT.json [limit]');
  process.exit(2);
}
const limit = process.argv[3] ? Number(process.argv[3]) : undefined;
const docs = readFactbook(limit ? { limit } : undefined);
writeFileSync(out, JSON.stringify(docs));
console.log(`${docs.length} documents written to ${out}`);
