import { createTestApi, dataOf, type TestApi } from './helpers/api';

/**
 * A document deleted (or re-ingested, which replaces its passages) right after retrieve's search
 * statement. The delete is a real statement on the real database, sent at that exact moment: the
 * test holds the search statement's reply until the delete has run, as a concurrent client's
 * transaction committing then would. The statement returns the ranked rows' columns (and the
 * passages' documents) itself, so the answer is its snapshot, whole; what the selection reads later
 * (sections, tables of contents) finds the rows gone and answers null or empty, never an error.
 */

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const ASK = `query($q: String!, $mode: RetrievalMode!) {
  retrieve(question: $q, k1: 10, k2: 10, mode: $mode) {
    passages { rank passage { text document { key } section { title } } }
    documents { rank document { key toc { title } } }
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
  it.each(['LEXICAL', 'LEXICAL_DOCUMENTS'])('%s: answers from the statement\'s snapshot, and later reads of the deleted rows are null or empty', async (mode) => {
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
      // The same ranking and fields as before the delete: the statement's snapshot, no warning.
      const keysOf = (r: any) => [...r.passages.map((p: any) => p.passage.document.key), ...r.documents.map((d: any) => d.document.key)];
      expect(keysOf(after)).toEqual(keysOf(before));
      expect(after.passages.map((p: any) => p.passage.text)).toEqual(before.passages.map((p: any) => p.passage.text));
      expect(after.warnings).toEqual([]);
      // Read after the statement: the victim's sections and table of contents are gone.
      after.passages.forEach((p: any, i: number) => expect(p.passage.section).toEqual(p.passage.document.key === victim ? null : before.passages[i].passage.section));
      after.documents.forEach((d: any, i: number) => expect(d.document.toc).toEqual(d.document.key === victim ? [] : before.documents[i].document.toc));
      expect(before.documents.every((d: any) => d.document.toc.length > 0)).toBe(true);
      expect(before.passages.some((p: any) => p.passage.document.key === victim && p.passage.section !== null) || mode === 'LEXICAL_DOCUMENTS').toBe(true);
    } finally {
      db.queryWithSettings = search;
    }
    expect(dataOf(await api.exec(INGEST, { docs: docs.filter((d) => d.key === victim) })).ingestDocuments).toEqual({ created: 1, failed: 0 });
  });
});
