import { createTestApi, dataOf, type TestApi } from './helpers/api';

/**
 * A document deleted (or re-ingested, which replaces its passages) between retrieve's search
 * statement and the reads of the ranked rows' fields. The delete is a real statement on the real
 * database, sent at that exact moment: the test holds the search statement's reply until the
 * delete has run, as a concurrent client's transaction committing then would.
 */

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const ASK = `query($q: String!, $mode: RetrievalMode!) {
  retrieve(question: $q, k1: 10, k2: 10, mode: $mode) {
    passages { rank passage { text document { key } } }
    documents { rank document { key } }
    warnings
  }
}`;

const docs = ['oslo', 'bergen', 'tromso'].map((key) => ({
  key,
  title: `Harbour of ${key}`,
  abstract: `The harbour of ${key} handles ferries, fishing boats and cruise ships every week.`,
  sections: [{ title: 'Ferries', text: `Ferries leave the harbour of ${key} for the islands every morning.` }],
}));

describe('retrieve while a ranked document is deleted', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
    expect(dataOf(await api.exec(INGEST, { docs })).ingestDocuments).toEqual({ created: 3, failed: 0 });
  });
  afterAll(async () => api?.close());

  // LEXICAL ranks passages, LEXICAL_DOCUMENTS documents.
  it.each(['LEXICAL', 'LEXICAL_DOCUMENTS'])('%s: leaves the deleted rows out, renumbers the ranks and warns, instead of failing on their fields', async (mode) => {
    const ask = { q: 'harbour ferries islands', mode };
    const before = dataOf(await api.exec(ASK, ask)).retrieve;
    expect(before.warnings).toEqual([]);
    const ranked = [...before.passages.map((p: any) => p.passage.document.key), ...before.documents.map((d: any) => d.document.key)];
    expect(new Set(ranked)).toEqual(new Set(['bergen', 'oslo', 'tromso']));
    const victim = ranked[0] as string;

    const db = api.testDb.db;
    const search = db.queryWithSettings.bind(db);
    let armed = true;
    db.queryWithSettings = (async (settings: Record<string, string>, sql: string, params?: readonly unknown[]) => {
      const rows = await search(settings, sql, params);
      if (armed) {
        armed = false;
        await db.query('DELETE FROM documents WHERE key = $1', [victim]);
      }
      return rows;
    }) as typeof db.queryWithSettings;
    try {
      const result = await api.exec(ASK, ask);
      expect(result.errors).toBeUndefined();
      const after = dataOf(result).retrieve;
      expect(armed).toBe(false);
      // The same ranking, less the victim's rows.
      expect(after.documents.map((d: any) => d.document.key)).toEqual(before.documents.map((d: any) => d.document.key).filter((k: string) => k !== victim));
      expect(after.passages.map((p: any) => p.passage.text)).toEqual(
        before.passages.filter((p: any) => p.passage.document.key !== victim).map((p: any) => p.passage.text),
      );
      expect(after.passages.map((p: any) => p.rank)).toEqual(after.passages.map((_: unknown, i: number) => i + 1));
      expect(after.documents.map((d: any) => d.rank)).toEqual(after.documents.map((_: unknown, i: number) => i + 1));
      const gone = ranked.filter((k) => k === victim).length;
      expect(after.warnings).toEqual([expect.stringContaining(`${gone} ranked item(s) were removed or replaced`)]);
    } finally {
      db.queryWithSettings = search;
    }
    expect(dataOf(await api.exec(INGEST, { docs: docs.filter((d) => d.key === victim) })).ingestDocuments).toEqual({ created: 1, failed: 0 });
  });
});
