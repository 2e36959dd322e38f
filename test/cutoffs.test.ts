/**
 * Result cut-offs on the final score: minScore keeps the results at or above it,
 * autocut ends them at a jump in score. autocut is pinned on scores worked out by hand below;
 * through the API, both are checked against the uncut ranking of the same question.
 */
import { autocut } from '../src/retrieval/cutoff';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

describe('autocut', () => {
  // Normalized from the first score to the last: 0, .029, .043, .571, .6, 1; the line: 0, .2, .4, .6, .8, 1;
  // their difference: 0, −.171, −.357, −.029, −.2, 0. Its local maxima: at 3 (after the fall from .87 to .5), and at the end.
  const scores = [0.9, 0.88, 0.87, 0.5, 0.48, 0.2];

  it('ends before the first jump, the second, or keeps all when there are no more', () => {
    expect(autocut(scores, 1)).toBe(3);
    expect(autocut(scores, 2)).toBe(5);
    expect(autocut(scores, 3)).toBe(6);
  });

  it('keeps everything when the scores fall evenly, are equal, or are too few to have a jump', () => {
    expect(autocut([5, 4, 3, 2, 1], 1)).toBe(5);
    expect(autocut([0.3, 0.3, 0.3], 1)).toBe(3);
    expect(autocut([1, 0], 1)).toBe(2);
    expect(autocut([0.7], 1)).toBe(1);
    expect(autocut([], 1)).toBe(0);
  });

  it('finds the jump in negative scores too (a hybrid or dense ranking)', () => {
    expect(autocut([-0.1, -0.12, -0.9, -0.95, -1], 1)).toBe(2);
  });
});

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const RETRIEVE = `query($q: String!, $mode: RetrievalMode, $min: Float, $cut: Int) {
  retrieve(question: $q, k2: 20, mode: $mode, minScore: $min, autocut: $cut) { passages { rank score passage { id } } documents { rank score document { key } } }
}`;

const harbours = ['oslo', 'bergen', 'tromso', 'stavanger', 'narvik', 'alesund'];
const docs = harbours.map((key, i) => ({
  key,
  title: `Harbour of ${key}`,
  abstract: `The harbour of ${key} handles ferries and fishing boats.`,
  sections: [
    { title: 'Ferries', text: `Ferries leave ${key} for the islands${' every morning'.repeat(i + 1)}.` },
    { title: 'Fishing', text: `Fishing boats land cod and herring in ${key}; ${i % 2 ? 'ferries wait' : 'nets dry'} on the quay.` },
    { title: 'Weather', text: `Storms close the harbour of ${key} in winter.` },
  ],
}));

describe('minScore and autocut through the API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
    expect(dataOf(await api.exec(INGEST, { docs })).ingestDocuments).toEqual({ created: docs.length, failed: 0 });
  });
  afterAll(async () => api?.close());

  const ask = async (variables: Record<string, unknown>) =>
    dataOf(await api.exec(RETRIEVE, { q: 'ferries leave the islands', mode: 'LEXICAL', ...variables })).retrieve;

  it('keeps exactly the passages at or above minScore, in the same order', async () => {
    const all = (await ask({})).passages as { rank: number; score: number; passage: { id: string } }[];
    expect(all.length).toBeGreaterThan(5);
    const min = all[3].score;
    const cut = (await ask({ min })).passages;
    expect(cut).toEqual(all.filter((p) => p.score >= min));
    expect(cut.length).toBeGreaterThanOrEqual(4);
    expect(cut.length).toBeLessThan(all.length);
    expect((await ask({ min: all[0].score + 1 })).passages).toEqual([]);
  });

  it('ends the passages at the first jump in score with autocut: 1, after minScore', async () => {
    const all = (await ask({})).passages as { score: number }[];
    const kept = autocut(
      all.map((p) => p.score),
      1,
    );
    expect(kept).toBeLessThan(all.length);
    expect((await ask({ cut: 1 })).passages).toEqual(all.slice(0, kept));
    const min = all[all.length - 2].score;
    const afterMin = all.filter((p) => p.score >= min);
    expect((await ask({ cut: 1, min })).passages).toEqual(
      afterMin.slice(
        0,
        autocut(
          afterMin.map((p) => p.score),
          1,
        ),
      ),
    );
  });

  it('cuts the documents of a documents-only mode', async () => {
    const all = (await ask({ mode: 'LEXICAL_DOCUMENTS' })).documents as { score: number }[];
    expect(all.length).toBeGreaterThan(2);
    const min = all[1].score;
    expect((await ask({ mode: 'LEXICAL_DOCUMENTS', min })).documents).toEqual(all.filter((d) => d.score >= min));
  });

  it('refuses an autocut out of range with BAD_USER_INPUT naming it', async () => {
    for (const cut of [0, 101]) {
      const result = await api.exec(RETRIEVE, { q: 'ferries', mode: 'LEXICAL', cut });
      expect(result.errors?.[0]).toMatchObject({
        message: `autocut must be an integer from 1 to 100 (the jumps in score to cut at), got ${cut}`,
        extensions: { code: 'BAD_USER_INPUT', argument: 'autocut' },
      });
    }
  });
});
