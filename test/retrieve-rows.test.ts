import { parse, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { retrieveRowFetch } from '../src/graphql/selection';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

/**
 * The search statement returns the columns the selection reads of the ranked rows (one statement,
 * nothing after it), and they are the same fields the per-row reads return.
 */

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;

const docs = ['oslo', 'bergen', 'tromso'].map((key, i) => ({
  key,
  title: `Harbour of ${key}`,
  source: 'ports',
  metadata: { rank: i },
  abstract: `The harbour of ${key} handles ferries, fishing boats and cruise ships every week.`,
  sections: [
    { title: 'Ferries', text: `Ferries leave the harbour of ${key} for the islands every morning.` },
    { title: 'Fishing', text: `Fishing boats land cod and herring in ${key}.` },
  ],
}));

const PASSAGE_FIELDS =
  'id databaseId text titlePath wordCount ordinal section { title } previous { id } next { id } document { id key title source metadata contentHash createdAt updatedAt }';
const DOCUMENT_FIELDS = 'id databaseId key title abstract summary source metadata contentHash createdAt updatedAt passageCount toc { title }';

function fetchOf(query: string) {
  const document = parse(query);
  const operation = document.definitions.find((d) => d.kind === 'OperationDefinition') as OperationDefinitionNode;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === 'FragmentDefinition').map((d) => [d.name.value, d]),
  );
  const retrieve = operation.selectionSet.selections[0];
  if (retrieve.kind !== 'Field') throw new Error('expected the retrieve field');
  return retrieveRowFetch({ fieldNodes: [retrieve], fragments });
}

describe('the columns a retrieve selection reads', () => {
  it('asks for nothing when no row field is selected', () => {
    expect(fetchOf(`{ retrieve(question: "q") { passages { rank score } documents { rank } } }`)).toEqual({});
  });

  it('follows aliases and fragments, and answer reads the text', () => {
    const fetch = fetchOf(`
      fragment P on Passage { wordCount document { title } }
      { retrieve(question: "q") { passages { p: passage { ...P ... on Passage { ordinal } } answer { text } } } }`);
    expect(new Set(fetch.passages)).toEqual(new Set(['id', 'documentId', 'wordCount', 'ordinal', 'text']));
    expect(fetch.ofPassages).toBe(true);
    // the ranked documents' own rows are not selected: only the passages' documents are read
    expect(fetch.ofDocuments).toBe(false);
    expect(new Set(fetch.documents)).toEqual(new Set(['id', 'title']));
  });

  it('reads only ids for document relations and the link columns for passage relations', () => {
    const fetch = fetchOf(`{ retrieve(question: "q") {
      passages { passage { databaseId section { title } previous { id } } }
      documents { document { databaseId toc { title } passageCount } } } }`);
    expect(new Set(fetch.passages)).toEqual(new Set(['id', 'documentId', 'sectionId', 'ordinal']));
    expect(fetch.documents).toEqual(['id']);
    expect(fetch.ofPassages).toBeUndefined();
    expect(fetch.ofDocuments).toBeUndefined();
  });
});

describe('retrieve returns the ranked rows with the ranking', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
    expect(dataOf(await api.exec(INGEST, { docs })).ingestDocuments).toEqual({ created: 3, failed: 0 });
  });
  afterAll(async () => api?.close());

  it.each(['LEXICAL', 'LEXICAL_DOCUMENTS'])('%s: the same fields as reading each row by id', async (mode) => {
    const result = dataOf(
      await api.exec(
        `query($mode: RetrievalMode!) { retrieve(question: "harbour ferries fishing", k1: 10, k2: 10, mode: $mode) {
        passages { rank passage { ${PASSAGE_FIELDS} } } documents { rank document { ${DOCUMENT_FIELDS} } } warnings } }`,
        { mode },
      ),
    ).retrieve;
    expect(result.warnings).toEqual([]);
    expect(result.passages.length + result.documents.length).toBeGreaterThan(0);
    for (const p of result.passages) {
      expect(p.passage).toEqual(dataOf(await api.exec(`query($id: ID!) { passage(id: $id) { ${PASSAGE_FIELDS} } }`, { id: p.passage.id })).passage);
    }
    for (const d of result.documents) {
      expect(d.document).toEqual(
        dataOf(await api.exec(`query($key: String!) { document(key: $key) { ${DOCUMENT_FIELDS} } }`, { key: d.document.key })).document,
      );
    }
  });

  it('answers passages with their text and document in one statement', async () => {
    const ask = `{ retrieve(question: "harbour ferries", k2: 5, mode: LEXICAL) { passages { rank passage { id text titlePath document { key title } } } } }`;
    dataOf(await api.exec(ask)); // the connection's search settings are sent once, on the first search
    const before = api.testDb.db.statements.count;
    const result = dataOf(await api.exec(ask)).retrieve;
    expect(api.testDb.db.statements.count - before).toBe(1);
    expect(result.passages.length).toBeGreaterThan(0);
    for (const p of result.passages) expect(p.passage.text).toContain('harbour');
    // each passage's document came with the ranking (a missing row would cost another statement)
    const titles = new Map(docs.map((d: { key: string; title: string }) => [d.key, d.title]));
    for (const p of result.passages) expect(p.passage.document.title).toBe(titles.get(p.passage.document.key));
  });
});
