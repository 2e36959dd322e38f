import { identityMap, type LinearMap } from '../src/adapters/linear';
import { EncoderSet } from '../src/encoders/set';
import { registerAdapter } from '../src/store/adapters';
import { registerModel } from '../src/store/embeddings';
import { createTestApi, type TestApi } from './helpers/api';
import { prng } from './helpers/prng';
import { syntheticModel } from './helpers/synthetic-model';
import { tableModel } from './helpers/table-model';

/** The adapters query, activateAdapter and dropAdapter mutations: admin only, typed refusals, retrieve { adapter }. */

const DIM = 16;
const READER = { keyId: 1, role: 'reader' as const, name: 'reader' };

function randomMap(d: number, seed: number): LinearMap {
  const rand = prng(seed);
  return { dim: d, w: Float32Array.from({ length: d * d }, () => (rand() - 0.5) * 0.3), b: new Float32Array(d) };
}

const LIST = `{ adapters { name active dimension pairs createdAt levels { level questionModel targetModel trainPairs heldOutPairs baselineRecallAt1 recallAt1 bestEpoch epochs { epoch trainLoss heldOutLoss heldOutRecallAt1 } } } }`;
const ACTIVATE = `mutation($name: String) { activateAdapter(name: $name) { name active } }`;
const DROP = `mutation($name: String!) { dropAdapter(name: $name) { name active } }`;
const ASK = `{ retrieve(question: "the river", mode: FLAT, k2: 3) { adapter warnings passages { passageScore } } }`;

describe('GraphQL: adapters', () => {
  let api: TestApi;

  beforeAll(async () => {
    const model = tableModel('gql-adapter-16', DIM);
    api = await createTestApi({}, EncoderSet.of({ questionDocument: model, document: model, questionPassage: model, passage: model }), {
      registry: { ttlMs: 0 },
    });
    const docs = Array.from({ length: 4 }, (_, i) => ({ title: `Doc ${i}`, sections: [{ title: 'S', text: `the river ${i} and the hill.` }] }));
    const ingested = await api.exec(`mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created } }`, { docs });
    expect(ingested.data.ingestDocuments.created).toBe(4);
    const row = (await api.models!.current())!.passage;
    const base = { question: row, target: row };
    const training = {
      pairs: 40,
      levels: {
        passage: {
          pairs: { train: 36, heldOut: 4 },
          baseline: { loss: 2, accuracy: 0.25 },
          curve: [{ epoch: 1, trainLoss: 1.5, heldOut: { loss: 1.2, accuracy: 0.5 } }],
          bestEpoch: 1,
        },
      },
    };
    await registerAdapter(api.testDb.db, { name: 'learned', dimension: DIM, maps: { passage: randomMap(DIM, 1) }, models: { passage: base }, training });
    await registerAdapter(api.testDb.db, {
      name: 'identity',
      dimension: DIM,
      maps: { passage: identityMap(DIM), document: identityMap(DIM) },
      models: { passage: base, document: base },
      training: {},
    });
    const eight = await registerModel(api.testDb.db, syntheticModel('gql-adapter-8', 8));
    await registerAdapter(api.testDb.db, {
      name: 'eight',
      dimension: 8,
      maps: { passage: identityMap(8) },
      models: { passage: { question: eight, target: eight } },
      training: {},
    });
  });
  afterAll(() => api.close());

  it('is for admins only', async () => {
    const list = await api.execAs(READER, LIST);
    expect(list.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const activate = await api.execAs(READER, ACTIVATE, { name: 'learned' });
    expect(activate.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const drop = await api.execAs(READER, DROP, { name: 'learned' });
    expect(drop.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('lists adapters with their training figures, never their weights', async () => {
    const r = await api.exec(LIST);
    expect(r.errors).toBeUndefined();
    expect(r.data.adapters.map((a: { name: string }) => a.name)).toEqual(['learned', 'identity', 'eight']);
    expect(r.data.adapters[0]).toMatchObject({
      name: 'learned',
      active: false,
      dimension: DIM,
      pairs: 40,
      levels: [
        {
          level: 'PASSAGE',
          questionModel: 'gql-adapter-16',
          targetModel: 'gql-adapter-16',
          trainPairs: 36,
          heldOutPairs: 4,
          baselineRecallAt1: 0.25,
          recallAt1: 0.5,
          bestEpoch: 1,
          epochs: [{ epoch: 1, trainLoss: 1.5, heldOutLoss: 1.2, heldOutRecallAt1: 0.5 }],
        },
      ],
    });
  });

  it('activates, applies, rolls back; refuses a mismatch with its code', async () => {
    const before = await api.exec(ASK);
    expect(before.data.retrieve.adapter).toBeNull();

    const on = await api.exec(ACTIVATE, { name: 'learned' });
    expect(on.data.activateAdapter.find((a: { name: string }) => a.name === 'learned').active).toBe(true);
    const applied = await api.exec(ASK);
    expect(applied.data.retrieve.adapter).toBe('learned');
    expect(applied.data.retrieve.passages).not.toEqual(before.data.retrieve.passages);

    const identity = await api.exec(ACTIVATE, { name: 'identity' });
    expect(identity.errors).toBeUndefined();
    const same = await api.exec(ASK);
    expect(same.data.retrieve.adapter).toBe('identity');
    expect(same.data.retrieve.passages).toEqual(before.data.retrieve.passages);

    const refused = await api.exec(ACTIVATE, { name: 'eight' });
    expect(refused.errors?.[0].extensions?.code).toBe('DIMENSION_MISMATCH');
    expect(refused.errors?.[0].message).toMatch(/maps 8-d vectors/);
    expect((await api.exec(ASK)).data.retrieve.adapter).toBe('identity');

    const off = await api.exec(ACTIVATE, { name: null });
    expect(off.data.activateAdapter.every((a: { active: boolean }) => !a.active)).toBe(true);
    expect((await api.exec(ASK)).data.retrieve).toEqual(before.data.retrieve);
  });

  it('drops an adapter that is not active; refuses the active one and an unknown name, changing nothing', async () => {
    expect((await api.exec(ACTIVATE, { name: 'learned' })).errors).toBeUndefined();
    const names = async () => (await api.exec(LIST)).data.adapters.map((a: { name: string }) => a.name);

    const active = await api.exec(DROP, { name: 'learned' });
    expect(active.errors?.[0]).toMatchObject({ extensions: { code: 'CONFLICT', argument: 'name' } });
    expect(active.errors?.[0].message).toMatch(/adapter "learned" is active/);
    const unknown = await api.exec(DROP, { name: 'nope' });
    expect(unknown.errors?.[0]).toMatchObject({ extensions: { code: 'NOT_FOUND', argument: 'name' } });
    expect(await names()).toEqual(['learned', 'identity', 'eight']);
    expect((await api.exec(ASK)).data.retrieve.adapter).toBe('learned');

    const dropped = await api.exec(DROP, { name: 'eight' });
    expect(dropped.errors).toBeUndefined();
    expect(dropped.data.dropAdapter).toEqual([
      { name: 'learned', active: true },
      { name: 'identity', active: false },
    ]);
    expect(await names()).toEqual(['learned', 'identity']);
    expect((await api.exec(ACTIVATE, { name: 'eight' })).errors?.[0].extensions?.code).toBe('NOT_FOUND');

    // After rolling back, the formerly active adapter can go too.
    expect((await api.exec(ACTIVATE, { name: null })).errors).toBeUndefined();
    expect((await api.exec(DROP, { name: 'learned' })).errors).toBeUndefined();
    expect(await names()).toEqual(['identity']);
  });
});
