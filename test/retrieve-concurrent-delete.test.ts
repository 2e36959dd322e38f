import { EncoderSet } from '../src/encoders/set';
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
  it.each(['LEXICAL', 'LEXICAL_DOCUMENTS'])(
    "%s: answers from the statement's snapshot, and later reads of the deleted rows are null or empty",
    async (mode) => {
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
        after.passages.forEach((p: any, i: number) =>
          expect(p.passage.section).toEqual(p.passage.document.key === victim ? null : before.passages[i].passage.section),
        );
        after.documents.forEach((d: any, i: number) => expect(d.document.toc).toEqual(d.document.key === victim ? [] : before.documents[i].document.toc));
        expect(before.documents.every((d: any) => d.document.toc.length > 0)).toBe(true);
        expect(before.passages.some((p: any) => p.passage.document.key === victim && p.passage.section !== null) || mode === 'LEXICAL_DOCUMENTS').toBe(true);
      } finally {
        db.queryWithSettings = search;
      }
      expect(dataOf(await api.exec(INGEST, { docs: docs.filter((d) => d.key === victim) })).ingestDocuments).toEqual({ created: 1, failed: 0 });
    },
  );
});

/**
 * The warning counts only ranked items whose rows were read and found missing. A selection that
 * reads no field of stage 1's documents (the console, `dhr ask`) fetches only the passages'
 * documents, so stage 1's other documents have no rows and are not gone.
 */
describe('retrieve warns of removed items only when they are gone', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  const harbours = ['oslo', 'bergen', 'tromso', 'narvik', 'alesund'].map((key) => ({
    key,
    title: `Harbour of ${key}`,
    abstract: `The harbour of ${key} handles ferries, fishing boats and cruise ships every week.`,
    sections: [{ title: 'Ferries', text: `Ferries leave the harbour of ${key} for the islands every morning.` }],
  }));
  beforeAll(async () => {
    encoders = await EncoderSet.load();
    api = await createTestApi({}, encoders);
    expect(dataOf(await api.exec(INGEST, { docs: harbours })).ingestDocuments).toEqual({ created: 5, failed: 0 });
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await encoders?.close();
  });

  // The default mode ranks k1 documents in stage 1, then k2 passages of them.
  const PASSAGES_ONLY = `query { retrieve(question: "harbour ferries islands", k1: 5, k2: 2) { passages { rank passage { text document { key } } } warnings } }`;
  const DOCUMENT_IDS = `query { retrieve(question: "harbour ferries islands", k1: 5, k2: 2) { passages { passage { document { key } } } documents { rank score } warnings } }`;
  const BOTH = `query { retrieve(question: "harbour ferries islands", k1: 5, k2: 10) { passages { passage { document { key } } } documents { document { key } } warnings } }`;

  it('has no such warning, and all of stage 1’s documents, when the selection reads no document field of them', async () => {
    const passagesOnly = dataOf(await api.exec(PASSAGES_ONLY)).retrieve;
    expect(passagesOnly.passages).toHaveLength(2);
    expect(passagesOnly.warnings).toEqual([]);
    const ids = dataOf(await api.exec(DOCUMENT_IDS)).retrieve;
    expect(ids.warnings).toEqual([]);
    expect(ids.documents.map((d: { rank: number }) => d.rank)).toEqual([1, 2, 3, 4, 5]);
  });

  it('warns, counting them, when a ranked document is deleted before its rows are read', async () => {
    const db = api.testDb.db;
    const search = db.queryWithSettings.bind(db);
    const before = dataOf(await api.exec(BOTH)).retrieve;
    const victim = before.documents[0].document.key as string;
    const victimPassages = before.passages.filter((p: any) => p.passage.document.key === victim).length;
    expect(victimPassages).toBeGreaterThan(0);
    // Deleted right after the ranking; its rows then read as a read after the delete finds them (a
    // row read later than the ranking: the case the warning is for).
    db.queryWithSettings = (async (settings: Record<string, string>, sql: string, params?: readonly unknown[]) => {
      const [row] = (await search(settings, sql, params)) as any[];
      await db.query('DELETE FROM documents WHERE key = $1', [victim]);
      const live = new Set((await db.query<{ id: number }>('SELECT id FROM documents')).map((d) => d.id));
      row.document_rows = row.document_rows?.filter((d: { id: number }) => live.has(d.id));
      row.passage_rows = row.passage_rows?.filter((p: { documentId: number }) => live.has(p.documentId));
      return [row];
    }) as typeof db.queryWithSettings;
    try {
      const after = dataOf(await api.exec(BOTH)).retrieve;
      expect(after.documents.map((d: any) => d.document.key)).not.toContain(victim);
      expect(after.warnings).toContain(
        `${victimPassages + 1} ranked item(s) were removed or replaced by a concurrent ingest or delete while this question was answered, and are left out`,
      );
    } finally {
      db.queryWithSettings = search;
    }
  });
});
