/**
 * Refusals name the right thing: a refused value is echoed as the caller wrote it (JSON), a
 * setting the mode does not read is refused naming the mode and what it reads (derived from the
 * tables: src/retrieval/mode-parameters.ts), and a question vector of zeros, which ranks nothing,
 * is refused. Each through the API on a real store, and nothing is stored by a refusal.
 */
import { echo } from '../src/errors';
import { MODE_PARAMETERS, modeReads } from '../src/retrieval/mode-parameters';
import { MODES, RETRIEVAL_MODES } from '../src/retrieval/modes';
import { RANKING, RANKING_NAMES } from '../src/retrieval/parameters';
import { checkModeSettings } from '../src/retrieval/settings';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

const SET = `mutation($mode: RetrievalMode!, $values: JSONObject) { setRetrievalSettings(mode: $mode, values: $values) { version } }`;
const VERSION = `{ retrievalSettings { version } }`;
const RETRIEVE = `query($v: [Float!], $mode: RetrievalMode) { retrieve(questionVector: $v, mode: $mode) { passages { rank } } }`;

describe('echo', () => {
  it('writes a value as JSON, so an object, a list and a string are told from a number', () => {
    expect([{ x: 1 }, [1], '3', 3, 0.5, true, null, NaN, -Infinity, undefined].map(echo)).toEqual([
      '{"x":1}',
      '[1]',
      '"3"',
      '3',
      '0.5',
      'true',
      'null',
      'NaN',
      '-Infinity',
      'nothing',
    ]);
    expect(echo('y'.repeat(200))).toBe(`"${'y'.repeat(78)}…`);
  });
});

describe('which parameters a mode reads', () => {
  it('follows the mode table’s flags and the parameters’ own descriptions', () => {
    for (const mode of RETRIEVAL_MODES) {
      const spec = MODES[mode];
      expect(modeReads(mode, 'lambda')).toBe(spec.usesLambda);
      expect(modeReads(mode, 'alpha')).toBe(spec.usesAlpha);
      expect(modeReads(mode, 'perDocument')).toBe(!spec.documentsOnly);
      for (const name of RANKING_NAMES.filter((n) => RANKING[n].description.startsWith('HYBRID_HIERARCHICAL:'))) {
        expect([mode, name, modeReads(mode, name)]).toEqual([mode, name, mode === 'HYBRID_HIERARCHICAL']);
      }
    }
    expect(MODE_PARAMETERS.HIERARCHICAL).toEqual(['lambda', 'perDocument', 'perDocumentDecay']);
    expect(MODE_PARAMETERS.LEXICAL_DOCUMENTS).toEqual([]);
  });

  it('takes a setting of every parameter a mode reads and refuses every other one', () => {
    const valid = {
      lambda: 0.5,
      alpha: 0.5,
      documentAlpha: 0.5,
      summaryShare: 0.5,
      documentPassages: 'top3',
      summaryPieces: true,
      perDocument: 2,
      perDocumentDecay: 0.1,
      passageBudget: 100,
      titleLink: 1,
      titleLinkRank: 3,
      titleLinkDense: 0.5,
    };
    expect(Object.keys(valid).sort()).toEqual([...RANKING_NAMES].sort());
    for (const mode of RETRIEVAL_MODES) {
      for (const name of RANKING_NAMES) {
        const set = () => checkModeSettings(mode, { [name]: valid[name] });
        if (modeReads(mode, name)) expect(set).not.toThrow();
        else expect(set).toThrow(`${mode} does not read ${name}`);
      }
    }
  });
});

describe('refusals through the API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
  }, 120_000);
  afterAll(async () => api?.close());

  const refusal = async (query: string, variables: Record<string, unknown>) => {
    const result = await api.exec(query, variables);
    expect(result.data?.setRetrievalSettings ?? result.data?.retrieve ?? null).toBeNull();
    return { code: result.errors?.[0].extensions?.code, argument: result.errors?.[0].extensions?.argument, message: result.errors?.[0].message };
  };

  it.each([
    [{ perDocument: { x: 1 } }, 'got {"x":1}'],
    [{ perDocument: [1] }, 'got [1]'],
    [{ perDocumentDecay: '0.3' }, 'got "0.3"'],
    [{ perDocument: '3' }, 'got "3"'],
  ])('echoes %j as written', async (values, got) => {
    const refused = await refusal(SET, { mode: 'LEXICAL', values });
    expect(refused).toMatchObject({ code: 'BAD_USER_INPUT', argument: `values.${Object.keys(values)[0]}` });
    expect(refused.message).toMatch(new RegExp(`, ${got.replace(/[[\]{}"().]/g, '\\$&')}$`));
  });

  it('refuses a setting the mode does not read, naming the mode and the parameters it reads, and stores nothing', async () => {
    const before = dataOf(await api.exec(VERSION)).retrievalSettings.version;
    expect(await refusal(SET, { mode: 'HIERARCHICAL', values: { alpha: 0.5 } })).toEqual({
      code: 'BAD_USER_INPUT',
      argument: 'values.alpha',
      message:
        'HIERARCHICAL does not read alpha, so a setting of it would never be used; HIERARCHICAL reads lambda, perDocument, perDocumentDecay (alpha is read by HYBRID_HIERARCHICAL, HYBRID)',
    });
    expect((await refusal(SET, { mode: 'LEXICAL_DOCUMENTS', values: { perDocument: 1 } })).message).toMatch(
      /LEXICAL_DOCUMENTS reads none of the ranking parameters/,
    );
    expect(dataOf(await api.exec(VERSION)).retrievalSettings.version).toBe(before);
    // What it reads is taken.
    expect(dataOf(await api.exec(SET, { mode: 'HIERARCHICAL', values: { lambda: 0.5 } })).setRetrievalSettings.version).toBe((before ?? 0) + 1);
  });

  it('refuses a question vector of zeros: it has no direction', async () => {
    for (const v of [
      [0, 0, 0],
      [0, -0, 1e-50],
    ]) {
      const refused = await refusal(RETRIEVE, { v, mode: 'HIERARCHICAL' });
      expect(refused).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'questionVector' });
      expect(refused.message).toMatch(/the vector has no direction/);
    }
    // One number not zero has a direction: refused here for another reason (this server has no encoders).
    expect((await refusal(RETRIEVE, { v: [0, 0, 1], mode: 'HIERARCHICAL' })).message).not.toMatch(/no direction/);
  });
});
