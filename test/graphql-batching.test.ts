import { createTestApi, dataOf, type TestApi } from './helpers/api';

/** A nested query's statement count must not grow with the number of documents (DataLoader batching). */
const NESTED = `query($n: Int!) {
  documents(first: $n) {
    edges { node {
      key passageCount
      sections { title children { title passages { text next { ordinal } section { title } } parent { title } } }
      toc { title }
      passages(first: 3) { edges { node { ordinal previous { ordinal } } } }
      outgoingLinks { target targetDocument { key } }
      incomingLinks { sourceDocument { key } }
    } }
  }
}`;

function corpus(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    key: `doc-${i}`,
    title: `Document ${i}`,
    abstract: `Abstract of document ${i}, linking [[Document ${(i + 1) % n}]].`,
    sections: [0, 1, 2].map((s) => ({
      title: `Section ${s}`,
      text: `Text of section ${s} in document ${i}.`,
      sections: [0, 1].map((c) => ({ title: `Sub ${s}.${c}`, text: `Sub text ${s}.${c} of ${i}. Another sentence.` })),
    })),
  }));
}

describe('GraphQL: batched loading', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi({ MAX_PAGE_SIZE: '100' });
    const result = dataOf(
      await api.exec(`mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`, {
        docs: corpus(50),
      }),
    );
    expect(result.ingestDocuments).toEqual({ created: 50, failed: 0 });
  });
  afterAll(() => api.close());

  async function statementsFor(n: number): Promise<{ statements: number; data: any }> {
    const counter = api.testDb.db.statements;
    counter.reset();
    const data = dataOf(await api.exec(NESTED, { n }));
    return { statements: counter.count, data };
  }

  it('answers a nested query over 50 documents in a bounded number of statements', async () => {
    const { statements, data } = await statementsFor(50);
    const docs = data.documents.edges.map((e: any) => e.node);
    expect(docs).toHaveLength(50);
    // By key: one mutation writes its documents concurrently on PostgreSQL, so the listing (id)
    // order need not be the batch order.
    const doc = (key: string) => docs.find((d: any) => d.key === key);
    // The data really is there (so the bound is not met by returning nothing).
    expect(doc('doc-7').sections[2].children[1].passages[0].text).toBe('Sub text 2.1 of 7. Another sentence.');
    expect(doc('doc-7').outgoingLinks).toEqual([{ target: 'Document 8', targetDocument: { key: 'doc-8' } }]);
    expect(doc('doc-8').incomingLinks).toEqual([{ sourceDocument: { key: 'doc-7' } }]);
    expect(doc('doc-0').passageCount).toBe(10);
    // One statement per level of the query: documents, toc, children, passages by section,
    // next passages, sections, pages, counts, links, link targets, ...
    expect(statements).toBeLessThanOrEqual(14);
    // Ten times fewer documents costs no fewer statements: the count is per level, not per row.
    // (With 5 documents one more statement fetches link targets outside the page.)
    const small = await statementsFor(5);
    expect(small.statements).toBeGreaterThanOrEqual(statements);
    expect(small.statements).toBeLessThanOrEqual(14);
  });
});
