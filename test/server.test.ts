import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';
import { createApiKey } from '../src/store/keys';
import { ingestDocuments } from '../src/pipeline/ingest';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { createTestDatabase, type TestDatabase } from './helpers/database';

describe('HTTP server', () => {
  let t: TestDatabase;
  let url: string;
  let stop: () => Promise<void>;
  let adminKey: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    adminKey = (await createApiKey(t.db, { role: 'admin', name: 'test' })).key;
    ({ url, stop } = await startServer(t.db, loadConfig({ PORT: '0' })));
  });
  afterAll(async () => {
    await stop();
    await t.drop();
  });

  it('serves GraphQL over HTTP: ingest, then read back', async () => {
    const post = (query: string, variables?: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
        body: JSON.stringify({ query, variables }),
      });
    const created = await post(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created } }`, {
      d: [{ title: 'Over HTTP', text: 'It works.' }],
    });
    expect(await created.json()).toEqual({ data: { ingestDocuments: { created: 1 } } });
    const read = await post(`{ document(key: "Over HTTP") { passages { edges { node { text } } } } }`);
    expect(await read.json()).toEqual({ data: { document: { passages: { edges: [{ node: { text: 'It works.' } }] } } } });
  });

  it('blocks a simple cross-site GET (CSRF prevention)', async () => {
    const response = await fetch(`${url}?query=${encodeURIComponent('{ stats { documents } }')}`);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/CSRF/);
  });
});

describe('embedded database', () => {
  it('keeps everything across a restart in its data directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-persist-'));
    const first = await PgliteDatabase.open({ dataDir: dir });
    await migrate(first);
    await ingestDocuments(first, [{ key: 'kept', title: 'Kept', sections: [{ title: 'S', text: 'Still here.' }] }], {
      maxWords: 100,
      maxDocumentBytes: 1e6,
    });
    await first.close();

    const second = await PgliteDatabase.open({ dataDir: dir });
    expect(await migrate(second)).toEqual([]);
    const rows = await second.query<{ title: string; text: string }>(
      `SELECT d.title, p.text FROM documents d JOIN passages p ON p.document_id = d.id`,
    );
    expect(rows).toEqual([{ title: 'Kept', text: 'Still here.' }]);
    await second.close();
  });
});
