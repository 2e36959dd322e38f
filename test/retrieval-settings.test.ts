import { loadConfig } from '../src/config';
import { EncoderSet } from '../src/encoders/set';
import { MODES, modeDefaults } from '../src/retrieval/modes';
import { RANKING_NAMES, resolveRanking } from '../src/retrieval/parameters';
import { startServer } from '../src/server';
import { PostgresDatabase } from '../src/store/postgres';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { dhr, useCliStore } from './helpers/cli';
import { useTestServer } from './helpers/server';

/**
 * The ranking parameters resolved in one place (request → corpus settings →
 * environment → the mode's default) and the corpus's settings stored, versioned, served and
 * picked up without a restart.
 */

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const RETRIEVE = `query($q: String!, $mode: RetrievalMode, $k2: Int, $alpha: Float, $perDocument: Int) {
  retrieve(question: $q, mode: $mode, k2: $k2, alpha: $alpha, perDocument: $perDocument) {
    mode alpha lambda perDocument
    parameters { name value source }
    passages { score passage { id document { key } } }
  }
}`;
const SETTINGS = `{ retrievalSettings { version setBy note previous modes { mode parameters { name value source } } } }`;
const SET = `mutation($mode: RetrievalMode!, $values: JSONObject, $unset: [String!], $note: String) {
  setRetrievalSettings(mode: $mode, values: $values, unset: $unset, note: $note) { version setBy note previous modes { mode parameters { name value source } } }
}`;
const ROLLBACK = `mutation { rollbackRetrievalSettings { version previous note modes { mode parameters { name value source } } } }`;

// Three documents of several passages each that all mention rivers, so LEXICAL ranks passages of one document together.
const DOCS = ['Rhine', 'Danube', 'Elbe'].map((name) => ({
  key: name.toLowerCase(),
  title: name,
  abstract: `The ${name} is a river of Europe.`,
  sections: [
    { title: 'Course', text: `The ${name} river flows through many towns and the river carries barges.` },
    { title: 'Bridges', text: `Old bridges cross the ${name} river in every town along it.` },
    { title: 'Floods', text: `The ${name} river floods in spring when the snow melts.` },
  ],
}));

type Param = { name: string; value: unknown; source: string };
const param = (ps: Param[], name: string) => ps.find((p) => p.name === name)!;
const keysOf = (r: { passages: { passage: { document: { key: string } } }[] }) => r.passages.map((p) => p.passage.document.key);
const maxPerDocument = (keys: string[]) => Math.max(...[...new Set(keys)].map((k) => keys.filter((x) => x === k).length));

describe('resolveRanking', () => {
  const defaults = MODES.HYBRID_HIERARCHICAL.defaults;

  it('takes each parameter from the first of request, corpus, environment, mode that gives it, and says which', () => {
    const r = resolveRanking(defaults, {
      request: { lambda: 2 },
      corpus: { lambda: 3, alpha: 0.7, perDocument: null },
      environment: { alpha: 0.9, perDocument: 4, summaryShare: 0.5 },
    });
    expect(r.values).toMatchObject({ lambda: 2, alpha: 0.7, documentAlpha: 0.7, perDocument: null, summaryShare: 0.5, summaryPieces: defaults.summaryPieces });
    expect(r.sources).toMatchObject({
      lambda: 'request',
      alpha: 'corpus',
      documentAlpha: 'corpus',
      perDocument: 'corpus',
      summaryShare: 'environment',
      summaryPieces: 'mode',
    });
    expect(Object.keys(r.values).sort()).toEqual([...RANKING_NAMES].sort());
  });

  it('lets a layer’s documentAlpha follow its own alpha only, and uses the mode’s defaults when no layer gives a value', () => {
    expect(resolveRanking(defaults, { environment: { alpha: 0.3 }, corpus: { documentAlpha: 0.8 } }).values).toMatchObject({ alpha: 0.3, documentAlpha: 0.8 });
    const none = resolveRanking(defaults, {});
    expect(none.values).toMatchObject({ lambda: defaults.lambda, alpha: defaults.alpha, documentAlpha: defaults.documentAlpha, perDocument: null });
    expect(new Set(Object.values(none.sources))).toEqual(new Set(['mode']));
  });
});

describe('retrieval settings over GraphQL', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  beforeAll(async () => {
    encoders = await EncoderSet.load();
    api = await createTestApi({ PER_DOCUMENT: '3', HYBRID_ALPHA: '0.9' }, encoders);
    expect(dataOf(await api.exec(INGEST, { docs: DOCS })).ingestDocuments.failed).toBe(0);
  }, 180_000);
  afterAll(async () => {
    await api?.close();
    await encoders?.close();
  });

  it('starts with no version: every mode’s parameters from the environment or the mode', async () => {
    const s = dataOf(await api.exec(SETTINGS)).retrievalSettings;
    expect(s.version).toBeNull();
    const lexical = s.modes.find((m: { mode: string }) => m.mode === 'LEXICAL').parameters;
    expect(param(lexical, 'perDocument')).toEqual({ name: 'perDocument', value: 3, source: 'environment' });
    expect(param(lexical, 'lambda')).toEqual({ name: 'lambda', value: modeDefaults('LEXICAL').lambda, source: 'mode' });
  });

  it('refuses a value out of range, an unknown parameter or mode, naming it, and changes nothing', async () => {
    for (const [variables, argument] of [
      [{ mode: 'HYBRID', values: { alpha: 1.5 } }, 'values.alpha'],
      [{ mode: 'HYBRID', values: { lambda: -1 } }, 'values.lambda'],
      [{ mode: 'LEXICAL', values: { perDocument: 0 } }, 'values.perDocument'],
      [{ mode: 'LEXICAL', values: { documentPassages: 'all' } }, 'values.documentPassages'],
      [{ mode: 'LEXICAL', values: { k3: 1 } }, 'values.k3'],
      [{ mode: 'LEXICAL', values: {} }, 'values'],
      [{ mode: 'LEXICAL', unset: ['gamma'] }, 'unset'],
    ] as const) {
      const r = await api.exec(SET, variables);
      expect(r.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
      expect(r.errors?.[0].message).toContain(argument.replace('values.', '').replace('values', 'parameter'));
    }
    expect(dataOf(await api.exec(SETTINGS)).retrievalSettings.version).toBeNull();
    expect((await api.exec(ROLLBACK)).errors?.[0].extensions?.code).toBe('CONFLICT');
  });

  it('applies a corpus setting to questions that leave it out, above the environment and below the question', async () => {
    const before = dataOf(await api.exec(RETRIEVE, { q: 'river town bridges', mode: 'LEXICAL', k2: 9 })).retrieve;
    expect(before.perDocument).toBe(3);
    expect(param(before.parameters, 'perDocument')).toMatchObject({ value: 3, source: 'environment' });
    expect(maxPerDocument(keysOf(before))).toBe(3);

    const set = dataOf(await api.exec(SET, { mode: 'LEXICAL', values: { perDocument: 1 }, note: 'one passage a page' })).setRetrievalSettings;
    expect(set).toMatchObject({ version: 1, setBy: 'test admin', note: 'one passage a page', previous: null });
    const lexical = set.modes.find((m: { mode: string }) => m.mode === 'LEXICAL').parameters;
    expect(param(lexical, 'perDocument')).toMatchObject({ value: 1, source: 'corpus' });
    // Another mode is untouched.
    expect(param(set.modes.find((m: { mode: string }) => m.mode === 'HYBRID').parameters, 'perDocument').source).toBe('environment');

    const bounded = dataOf(await api.exec(RETRIEVE, { q: 'river town bridges', mode: 'LEXICAL', k2: 9 })).retrieve;
    expect(bounded.perDocument).toBe(1);
    expect(param(bounded.parameters, 'perDocument')).toMatchObject({ value: 1, source: 'corpus' });
    expect(maxPerDocument(keysOf(bounded))).toBe(1);
    expect(keysOf(bounded).length).toBe(3);

    const asked = dataOf(await api.exec(RETRIEVE, { q: 'river town bridges', mode: 'LEXICAL', k2: 9, perDocument: 2 })).retrieve;
    expect(param(asked.parameters, 'perDocument')).toMatchObject({ value: 2, source: 'request' });
    expect(maxPerDocument(keysOf(asked))).toBe(2);
  });

  it('ranks with a corpus alpha exactly as with the same alpha asked for', async () => {
    const q = 'Which river floods when the snow melts?';
    dataOf(await api.exec(SET, { mode: 'HYBRID', values: { alpha: 0.35 } }));
    const fromCorpus = dataOf(await api.exec(RETRIEVE, { q, mode: 'HYBRID', k2: 12 })).retrieve;
    expect(fromCorpus.alpha).toBe(0.35);
    expect(param(fromCorpus.parameters, 'alpha')).toMatchObject({ value: 0.35, source: 'corpus' });
    const asked = dataOf(await api.exec(RETRIEVE, { q, mode: 'HYBRID', k2: 12, alpha: 0.35 })).retrieve;
    expect(fromCorpus.passages).toEqual(asked.passages);
    // The environment's 0.9 ranks differently, so the setting was not a no-op.
    const env = dataOf(await api.exec(RETRIEVE, { q, mode: 'HYBRID', k2: 12, alpha: 0.9 })).retrieve;
    expect(env.passages.map((p: { score: number }) => p.score)).not.toEqual(asked.passages.map((p: { score: number }) => p.score));
  });

  it('unsets a parameter, and rolls back one version at a time, each a new version', async () => {
    const v = dataOf(await api.exec(SETTINGS)).retrievalSettings.version as number;
    const unset = dataOf(await api.exec(SET, { mode: 'HYBRID', unset: ['alpha'] })).setRetrievalSettings;
    expect(unset.version).toBe(v + 1);
    expect(param(unset.modes.find((m: { mode: string }) => m.mode === 'HYBRID').parameters, 'alpha')).toMatchObject({ value: 0.9, source: 'environment' });

    const back = dataOf(await api.exec(ROLLBACK)).rollbackRetrievalSettings;
    expect(back.version).toBe(v + 2);
    expect(back.note).toBe(`rollback of version ${v + 1} to version ${v}`);
    expect(param(back.modes.find((m: { mode: string }) => m.mode === 'HYBRID').parameters, 'alpha')).toMatchObject({ value: 0.35, source: 'corpus' });
    const again = dataOf(await api.exec(ROLLBACK)).rollbackRetrievalSettings;
    expect(param(again.modes.find((m: { mode: string }) => m.mode === 'HYBRID').parameters, 'alpha').source).toBe('environment');
    expect(param(again.modes.find((m: { mode: string }) => m.mode === 'LEXICAL').parameters, 'perDocument').source).toBe('corpus');
  });

  it('lets only admins change settings; anyone may read them', async () => {
    const reader = { keyId: 9, role: 'reader' as const, name: 'app' };
    expect((await api.execAs(reader, SET, { mode: 'LEXICAL', values: { lambda: 2 } })).errors?.[0].extensions?.code).toBe('FORBIDDEN');
    expect(dataOf(await api.execAs(null, SETTINGS)).retrievalSettings.version).toBeGreaterThan(0);
  });
});

const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('PostgreSQL: a second server over the same store picks up new settings without a restart', () => {
  const a = useTestServer();

  it('answers with the new setting within its refresh time', async () => {
    expect((await a.post(INGEST, { docs: DOCS })).body.data.ingestDocuments.failed).toBe(0);
    const other = new PostgresDatabase({ url: a.dbUrl! });
    const b = await startServer(other, loadConfig({ PORT: '0' }));
    try {
      const ask = async () => {
        const res = await fetch(b.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: RETRIEVE, variables: { q: 'river town bridges', mode: 'LEXICAL', k2: 9 } }),
        });
        return ((await res.json()) as { data: { retrieve: { perDocument: number | null; passages: unknown[] } } }).data.retrieve;
      };
      expect((await ask()).perDocument).toBeNull(); // b has read (and cached) no settings
      expect((await a.post(SET, { mode: 'LEXICAL', values: { perDocument: 1 } })).body.data.setRetrievalSettings.version).toBe(1);
      const deadline = Date.now() + 10_000;
      let seen = await ask();
      while (seen.perDocument !== 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await ask();
      }
      expect(seen.perDocument).toBe(1);
      expect(seen.passages).toHaveLength(3);
    } finally {
      await b.stop();
      await other.close();
    }
  });
});

describe('dhr settings', () => {
  const store = useCliStore('dhr-cli-settings-');

  it('shows, sets, refuses, rolls back and lists versions', async () => {
    const shown = await dhr(['settings'], { ...store.env, PER_DOCUMENT: '2' });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ version: null, modes: { LEXICAL: { perDocument: '2 (environment)', lambda: '1 (mode)' } } });

    const set = await dhr(
      ['settings', 'set', '--mode', 'HYBRID_HIERARCHICAL', 'lambda=0.25', 'documentPassages=top3', 'perDocument=null', '--note', 'from the CLI'],
      store.env,
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      version: 1,
      setBy: 'cli',
      note: 'from the CLI',
      modes: {
        HYBRID_HIERARCHICAL: {
          lambda: '0.25 (corpus)',
          documentPassages: '"top3" (corpus)',
          perDocument: 'null (corpus)',
          alpha: `${MODES.HYBRID_HIERARCHICAL.defaults.alpha} (mode)`,
        },
      },
    });

    for (const args of [['lambda=11'], ['summaryPieces=maybe'], ['lambda']]) {
      const refused = await dhr(['settings', 'set', '--mode', 'HYBRID', ...args], store.env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(args[0] === 'lambda' ? /"lambda" is not name=value/ : new RegExp(`settings: ${args[0].split('=')[0]} must be`));
    }
    const second = await dhr(['settings', 'set', '--mode', 'HYBRID_HIERARCHICAL', '--unset', 'lambda'], store.env);
    expect(JSON.parse(second.stdout).modes.HYBRID_HIERARCHICAL.lambda).toBe(`${MODES.HYBRID_HIERARCHICAL.defaults.lambda} (mode)`);
    const back = await dhr(['settings', 'rollback'], store.env);
    expect(JSON.parse(back.stdout)).toMatchObject({ version: 3, previous: null, modes: { HYBRID_HIERARCHICAL: { lambda: '0.25 (corpus)' } } });
    const history = JSON.parse((await dhr(['settings', 'history'], store.env)).stdout);
    expect(history.map((v: { version: number; setBy: string }) => v.version)).toEqual([3, 2, 1]);
    const none = await dhr(['settings', 'rollback'], store.env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no previous version/);
  });
});
