import { EncoderSet } from '../src/encoders/set';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

const INGEST = `mutation($docs: [DocumentInput!]!) {
  ingestDocuments(documents: $docs) { created updated unchanged failed embedded { documents passages truncated } }
}`;
const MODELS = `{ embeddingModels { name dimension runtime roles documents staleDocuments passages } }`;

describe('GraphQL: ingest embeds with the default model', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  beforeAll(async () => {
    encoders = await EncoderSet.load();
    api = await createTestApi({}, encoders);
  });
  afterAll(async () => {
    await api.close();
    await encoders.close();
  });

  it('embeds created and updated documents, not unchanged ones, and reports coverage per model', async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i} and more words`).join(' ');
    const docs = [
      { key: 'a', title: 'Alpha', abstract: 'First letter.', sections: [{ title: 'Use', text: 'Mathematics.' }] },
      { key: 'b', title: 'Beta', text: `Second letter. ${long}` },
    ];
    const first = dataOf(await api.exec(INGEST, { docs })).ingestDocuments;
    const [{ passages }] = await api.testDb.db.query<{ passages: number }>('SELECT count(*)::int AS passages FROM passages');
    expect(passages).toBeGreaterThanOrEqual(5);
    expect(first).toMatchObject({ created: 2, embedded: { documents: 2, passages } });
    // Beta's long passage is over the passage budget of 128 tokens: counted, not silent.
    expect(first.embedded.truncated).toBeGreaterThanOrEqual(1);

    const again = dataOf(await api.exec(INGEST, { docs })).ingestDocuments;
    expect(again).toMatchObject({ unchanged: 2, embedded: { documents: 0, passages: 0 } });

    const changed = dataOf(await api.exec(INGEST, { docs: [{ ...docs[0], abstract: 'The first letter.' }] })).ingestDocuments;
    expect(changed).toMatchObject({ updated: 1, embedded: { documents: 1, passages: 2 } });

    const [{ passages: now }] = await api.testDb.db.query<{ passages: number }>('SELECT count(*)::int AS passages FROM passages');
    expect(now).toBe(passages);
    expect(dataOf(await api.exec(MODELS)).embeddingModels).toEqual([
      {
        name: 'use-lite',
        dimension: 512,
        runtime: 'onnxruntime-node',
        roles: ['QUESTION_DOCUMENT', 'DOCUMENT', 'QUESTION_PASSAGE', 'PASSAGE'],
        documents: 2,
        staleDocuments: 0,
        passages,
      },
    ]);
  });
});
