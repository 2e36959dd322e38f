import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestDocuments } from '../src/pipeline/ingest';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { useTestServer } from './helpers/server';

describe('HTTP server', () => {
  const server = useTestServer();

  it('serves GraphQL over HTTP: ingest, then read back', async () => {
    const created = await server.post(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created } }`, {
      d: [{ title: 'Over HTTP', text: 'It works.' }],
    });
    expect(created.body).toEqual({ data: { ingestDocuments: { created: 1 } } });
    const read = await server.post(`{ document(key: "Over HTTP") { passages { edges { node { text } } } } }`);
    expect(read.body).toEqual({ data: { document: { passages: { edges: [{ node: { text: 'It works.' } }] } } } });
  });

  it('blocks a simple cross-site GET (CSRF prevention)', async () => {
    const response = await fetch(`${server.url}?query=${encodeURIComponent('{ stats { documents } }')}`);
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
    const rows = await second.query<{ title: string; text: string }>(`SELECT d.title, p.text FROM documents d JOIN passages p ON p.document_id = d.id`);
    expect(rows).toEqual([{ title: 'Kept', text: 'Still here.' }]);
    await second.close();
  });
});
