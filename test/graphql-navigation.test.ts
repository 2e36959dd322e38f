import { createTestApi, dataOf, type TestApi } from './helpers/api';

const INGEST = `mutation($docs: [DocumentInput!]!) {
  ingestDocuments(documents: $docs) {
    created updated unchanged failed passages
    outcomes { index key title status documentId passages message }
  }
}`;

const alpha = {
  key: 'alpha',
  title: 'Alpha',
  source: 'test',
  metadata: { lang: 'en' },
  abstract: 'Alpha is the first letter. It links to [[Beta]].',
  sections: [
    {
      title: 'History',
      text: 'The history of alpha is long.',
      sections: [
        { title: 'Early', text: 'Early alpha was a glyph.' },
        { title: 'Late', text: 'Late alpha became a letter. It borders [Gamma land](gamma).' },
      ],
    },
    { title: 'Usage', text: 'Alpha is used in mathematics.' },
  ],
};

const betaMarkdown = '# Beta\n\nBeta is the second letter.\n\n## Overview\n\nBeta follows alpha.\n\n### Detail\n\nDetails of beta.\n';

describe('GraphQL: ingest and navigate the title tree', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
    const result = dataOf(await api.exec(INGEST, { docs: [alpha, { markdown: betaMarkdown, source: 'test' }] }));
    expect(result.ingestDocuments).toMatchObject({ created: 2, failed: 0, updated: 0, unchanged: 0 });
  });
  afterAll(() => api.close());

  it('navigates document → sections → children → passages and back up', async () => {
    const data = dataOf(
      await api.exec(`{
        document(key: "alpha") {
          id key title abstract summary source metadata passageCount
          sections { title depth ordinal titlePath
            children { title depth ordinal titlePath parent { title } document { key }
              passages { text titlePath wordCount section { title } document { title } } } }
          toc { title depth }
        }
      }`),
    );
    const doc = data.document;
    expect(doc).toMatchObject({ key: 'alpha', title: 'Alpha', source: 'test', metadata: { lang: 'en' } });
    expect(doc.abstract).toBe('Alpha is the first letter. It links to Beta.');
    expect(doc.summary).toBe('Alpha, Alpha is the first letter. It links to Beta., History, Early, Late, Usage');
    expect(doc.sections.map((s: any) => [s.title, s.depth, s.ordinal])).toEqual([
      ['History', 1, 0],
      ['Usage', 1, 1],
    ]);
    expect(doc.toc.map((s: any) => `${s.depth}:${s.title}`)).toEqual(['1:History', '2:Early', '2:Late', '1:Usage']);
    const [early, late] = doc.sections[0].children;
    expect(late).toMatchObject({ title: 'Late', depth: 2, ordinal: 1, titlePath: ['Alpha', 'History', 'Late'] });
    expect(early.parent.title).toBe('History');
    expect(early.document.key).toBe('alpha');
    expect(late.passages).toEqual([
      {
        text: 'Late alpha became a letter. It borders Gamma land.',
        titlePath: ['Alpha', 'History', 'Late'],
        wordCount: 9,
        section: { title: 'Late' },
        document: { title: 'Alpha' },
      },
    ]);
    // abstract + History + Early + Late + Usage, one passage each
    expect(doc.passageCount).toBe(5);
  });

  it('reads Markdown headings as the tree and the text before them as the abstract', async () => {
    const data = dataOf(await api.exec(`{ document(key: "Beta") { title abstract toc { title depth titlePath } } }`));
    expect(data.document).toEqual({
      title: 'Beta',
      abstract: 'Beta is the second letter.',
      toc: [
        { title: 'Overview', depth: 1, titlePath: ['Beta', 'Overview'] },
        { title: 'Detail', depth: 2, titlePath: ['Beta', 'Overview', 'Detail'] },
      ],
    });
  });

  it('walks passages in reading order with previous/next, abstract first with no section', async () => {
    const data = dataOf(await api.exec(`{ document(key: "alpha") { passages(first: 1) { edges { node { id ordinal section { id } } } } } }`));
    let node = data.document.passages.edges[0].node;
    expect(node.ordinal).toBe(0);
    expect(node.section).toBeNull();
    const seen: number[] = [];
    let id = node.id;
    while (id) {
      const step = dataOf(await api.exec(`query($id: ID!) { passage(id: $id) { id ordinal next { id } previous { id } } }`, { id }));
      seen.push(step.passage.ordinal);
      if (step.passage.ordinal === 0) expect(step.passage.previous).toBeNull();
      else expect(step.passage.previous).not.toBeNull();
      id = step.passage.next?.id;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });

  it('pages documents and passages with Relay cursors', async () => {
    // Documents list in id order. One mutation writes its documents concurrently on PostgreSQL,
    // so which of the two got the lower id follows commit order, not batch order.
    const all = dataOf(await api.exec(`{ documents(first: 10) { edges { node { id key } } } }`));
    const inOrder: string[] = all.documents.edges
      .map((e: any) => e.node)
      .sort((a: any, b: any) => Number(a.id) - Number(b.id))
      .map((n: any) => n.key);
    expect([...inOrder].sort()).toEqual(['Beta', 'alpha']);
    const page1 = dataOf(
      await api.exec(`{ documents(first: 1) { totalCount edges { cursor node { key } } pageInfo { hasNextPage hasPreviousPage endCursor } } }`),
    );
    expect(page1.documents.totalCount).toBe(2);
    expect(page1.documents.edges.map((e: any) => e.node.key)).toEqual([inOrder[0]]);
    expect(page1.documents.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const page2 = dataOf(
      await api.exec(`query($after: String) { documents(first: 1, after: $after) { edges { node { key } } pageInfo { hasNextPage hasPreviousPage } } }`, {
        after: page1.documents.pageInfo.endCursor,
      }),
    );
    expect(page2.documents.edges.map((e: any) => e.node.key)).toEqual([inOrder[1]]);
    expect(page2.documents.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true });

    const ordinals: number[] = [];
    let after: string | null = null;
    for (;;) {
      const r: any = dataOf(
        await api.exec(
          `query($after: String) { document(key: "alpha") { passages(first: 2, after: $after) { totalCount edges { node { ordinal } } pageInfo { hasNextPage endCursor } } } }`,
          { after },
        ),
      );
      const conn = r.document.passages;
      expect(conn.totalCount).toBe(5);
      ordinals.push(...conn.edges.map((e: any) => e.node.ordinal));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(ordinals).toEqual([0, 1, 2, 3, 4]);
  });

  it('filters documents by title substring (case-insensitive, literal) and source', async () => {
    const q = `query($t: String, $s: String) { documents(titleContains: $t, source: $s) { totalCount edges { node { key } } } }`;
    expect(dataOf(await api.exec(q, { t: 'BET' })).documents.edges.map((e: any) => e.node.key)).toEqual(['Beta']);
    expect(dataOf(await api.exec(q, { t: '%' })).documents.totalCount).toBe(0);
    expect(dataOf(await api.exec(q, { t: '_eta' })).documents.totalCount).toBe(0);
    expect(dataOf(await api.exec(q, { t: 'a\\' })).documents.totalCount).toBe(0);
    expect(dataOf(await api.exec(q, { s: 'test' })).documents.totalCount).toBe(2);
    expect(dataOf(await api.exec(q, { s: 'other' })).documents.totalCount).toBe(0);
  });

  it('resolves links now, and later when the target document arrives, and unresolves on delete', async () => {
    const links = async () =>
      dataOf(
        await api.exec(`{ document(key: "alpha") { outgoingLinks { target anchorText targetDocument { key } passage { ordinal } sourceDocument { key } } } }`),
      ).document.outgoingLinks;
    expect(await links()).toEqual([
      { target: 'Beta', anchorText: 'Beta', targetDocument: { key: 'Beta' }, passage: { ordinal: 0 }, sourceDocument: { key: 'alpha' } },
      { target: 'gamma', anchorText: 'Gamma land', targetDocument: null, passage: { ordinal: 3 }, sourceDocument: { key: 'alpha' } },
    ]);
    const incoming = dataOf(await api.exec(`{ document(key: "Beta") { incomingLinks { sourceDocument { key } anchorText } } }`));
    expect(incoming.document.incomingLinks).toEqual([{ sourceDocument: { key: 'alpha' }, anchorText: 'Beta' }]);

    const created = dataOf(await api.exec(INGEST, { docs: [{ key: 'gamma', title: 'Gamma', text: 'Gamma is the third letter.' }] }));
    const gammaId = created.ingestDocuments.outcomes[0].documentId;
    expect((await links())[1].targetDocument).toEqual({ key: 'gamma' });

    expect(dataOf(await api.exec(`mutation($id: ID!) { deleteDocument(id: $id) }`, { id: gammaId })).deleteDocument).toBe(true);
    expect((await links())[1].targetDocument).toBeNull();
    const left = await api.testDb.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM sections WHERE document_id = $1) + (SELECT count(*) FROM passages WHERE document_id = $1)
            + (SELECT count(*) FROM links WHERE document_id = $1) AS n`,
      [Number(gammaId)],
    );
    expect(left[0].n).toBe(0);
  });
});

describe('GraphQL: re-ingest, delete and bad input', () => {
  let api: TestApi;
  beforeEach(async () => {
    api = await createTestApi({ MAX_DOCUMENT_BYTES: '4000', MAX_INGEST_BATCH: '10', MAX_PAGE_SIZE: '50' });
  });
  afterEach(() => api.close());

  const counts = async () =>
    (
      await api.testDb.db.query<{ d: number; s: number; p: number; l: number }>(
        `SELECT (SELECT count(*) FROM documents) AS d, (SELECT count(*) FROM sections) AS s,
                (SELECT count(*) FROM passages) AS p, (SELECT count(*) FROM links) AS l`,
      )
    )[0];

  it('is a no-op for unchanged content and replaces changed content atomically, keeping the id', async () => {
    const first = dataOf(await api.exec(INGEST, { docs: [alpha] })).ingestDocuments.outcomes[0];
    const before = await counts();
    const oldPassage = dataOf(await api.exec(`{ document(key: "alpha") { passages(first: 1) { edges { node { id } } } } }`)).document.passages.edges[0].node.id;

    const again = dataOf(await api.exec(INGEST, { docs: [alpha] })).ingestDocuments;
    expect(again).toMatchObject({ unchanged: 1, created: 0, updated: 0, passages: 0 });
    expect(await counts()).toEqual(before);

    const changed = { ...alpha, sections: [{ title: 'Only', text: 'Replaced text.' }] };
    const updated = dataOf(await api.exec(INGEST, { docs: [changed] })).ingestDocuments.outcomes[0];
    expect(updated).toMatchObject({ status: 'UPDATED', documentId: first.documentId });
    const doc = dataOf(await api.exec(`{ document(key: "alpha") { toc { title } passageCount summary } }`)).document;
    expect(doc.toc).toEqual([{ title: 'Only' }]);
    expect(doc.passageCount).toBe(2);
    expect(doc.summary).toBe('Alpha, Alpha is the first letter. It links to Beta., Only');
    expect(dataOf(await api.exec(`query($id: ID!) { passage(id: $id) { id } }`, { id: oldPassage })).passage).toBeNull();
    expect(await counts()).toEqual({ d: 1, s: 1, p: 2, l: 1 });
  });

  it('reports each bad document by name, writes none of it, and still ingests the good ones', async () => {
    const docs = [
      { key: 'good-1', title: 'Good one', text: 'Fine text.' },
      { key: 'no-title', abstract: 'Text without a title.' },
      { key: 'untitled-section', title: 'Has untitled', sections: [{ title: 'Ok', text: 'x', sections: [{ text: 'orphan' }] }] },
      { key: 'empty', title: 'Empty', sections: [{ title: 'Nothing here' }] },
      { key: 'huge', title: 'Huge', abstract: 'word '.repeat(2000) },
      { key: 'bad-unicode', title: 'Bad \uD800 unicode', text: 'text' },
      { key: 'mixed', title: 'Mixed', markdown: '# x', sections: [{ title: 'a', text: 'b' }] },
      { key: 'good-2', markdown: '# Good two\n\nAlso fine.' },
    ];
    const result = dataOf(await api.exec(INGEST, { docs })).ingestDocuments;
    expect(result).toMatchObject({ created: 2, failed: 6 });
    const byKey = Object.fromEntries(result.outcomes.map((o: any) => [o.key ?? `#${o.index}`, o]));
    expect(byKey['good-1'].status).toBe('CREATED');
    expect(byKey['good-2'].status).toBe('CREATED');
    expect(byKey['no-title'].message).toMatch(/no-title.*missing title/);
    expect(byKey['untitled-section'].message).toMatch(/untitled-section.*section without a title at sections\[0\]\.sections\[0\]/);
    expect(byKey['empty'].message).toMatch(/empty.*empty document/);
    expect(byKey['huge'].message).toMatch(/huge.*over the limit of 4000 bytes/);
    expect(byKey['bad-unicode'].message).toMatch(/bad-unicode.*(UTF-8|Unicode)/);
    expect(byKey['mixed'].message).toMatch(/mixed/);
    for (const o of result.outcomes.filter((o: any) => o.status === 'FAILED')) expect(o.documentId).toBeNull();
    const keys = await api.testDb.db.query<{ key: string }>('SELECT key FROM documents ORDER BY key');
    expect(keys.map((r) => r.key)).toEqual(['good-1', 'good-2']);
  });

  it('rejects a batch over the limit whole, with BAD_USER_INPUT', async () => {
    const docs = Array.from({ length: 11 }, (_, i) => ({ title: `Doc ${i}`, text: 'text' }));
    const result = await api.exec(INGEST, { docs });
    expect(result.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0].message).toMatch(/11 items, over the limit of 10/);
    expect((await counts()).d).toBe(0);
  });

  it.each([
    ['a malformed id', `{ document(id: "abc") { id } }`, 'BAD_USER_INPUT', /id must be a Document id/],
    ['neither id nor key', `{ document { id } }`, 'BAD_USER_INPUT', /exactly one of id or key/],
    ['both id and key', `{ document(id: "1", key: "a") { id } }`, 'BAD_USER_INPUT', /exactly one of id or key/],
    ['a page too large', `{ documents(first: 51) { totalCount } }`, 'BAD_USER_INPUT', /first must be an integer from 0 to 50/],
    ['a negative page', `{ documents(first: -1) { totalCount } }`, 'BAD_USER_INPUT', /first must be/],
    ['a forged cursor', `{ documents(after: "bm9wZQ") { totalCount } }`, 'BAD_USER_INPUT', /not a valid cursor/],
    ['a malformed section id', `{ section(id: "0") { id } }`, 'BAD_USER_INPUT', /id must be a positive integer/],
    ['deleting a missing document', `mutation { deleteDocument(id: "999999") }`, 'NOT_FOUND', /document 999999 does not exist/],
  ])('answers %s with a typed error', async (_name, query, code, message) => {
    const result = await api.exec(query);
    expect(result.errors?.[0].extensions?.code).toBe(code);
    expect(result.errors?.[0].message).toMatch(message);
  });

  it('answers unknown ids with null, not an error', async () => {
    const data = dataOf(await api.exec(`{ document(id: "424242") { id } section(id: "424242") { id } passage(id: "424242") { id } }`));
    expect(data).toEqual({ document: null, section: null, passage: null });
  });
});
