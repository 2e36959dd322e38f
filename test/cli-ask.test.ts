import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliStore, dhr } from './helpers/cli';
import { useTestServer } from './helpers/server';

/** `dhr ask` as a user runs it: the real CLI process, on the local store and against a server. */

const NOTES = '# Pemba\n\n## Harvest\n\nPemba is an island. harvest month: October; crop: cloves.\n\n## Boats\n\nDhows carry the cloves to Zanzibar.\n';

describe('dhr ask on the local store', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-ask-'));
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ env, drop } = await cliStore(work));
    writeFileSync(join(work, 'pemba.md'), NOTES);
    expect((await dhr(['ingest', join(work, 'pemba.md')], env)).code).toBe(0);
  });
  afterAll(() => drop());

  it('prints the title path, the answer span marked in its sentence, and the scores', async () => {
    const { code, stdout } = await dhr(['ask', 'In which month is the harvest?', '--k2', '2'], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^In which month is the harvest\?\nHYBRID_HIERARCHICAL · k1 100 · k2 2 · /);
    expect(stdout).toContain('1. Pemba › Harvest\n   harvest month: **October**; crop: cloves.\n   score ');
    expect(stdout).toMatch(/score [\d.]+ \(passage [\d.]+, document [\d.]+; dense [\d.]+, BM25 [\d.]+; answer [\d.]+\)/);
  });

  it('prints JSON for scripts', async () => {
    const { code, stdout } = await dhr(['ask', 'Where do the dhows carry the cloves?', '--json', '--mode', 'LEXICAL'], env);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.mode).toBe('LEXICAL');
    // A "where" question: the typed answer is the place, not its whole sentence.
    expect(result.passages[0]).toMatchObject({ rank: 1, passage: { titlePath: ['Pemba', 'Boats'] }, answer: { text: 'Zanzibar' } });
  });

  it('--context prints the blocks a frontend would send, each under its title path, within the budget', async () => {
    const { code, stdout } = await dhr(['ask', 'When is the clove harvest?', '--context', '1500', '--mode', 'LEXICAL'], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/\ncontext: 2 block\(s\), \d+ of 1500 tokens \(use-lite\)\n/);
    expect(stdout).toMatch(
      /\n\[1\] Pemba › Harvest {2}\(rank 1 · score [\d.]+ · 1 passage\(s\) · \d+ tokens\)\nPemba is an island\. harvest month: October; crop: cloves\.\n/,
    );
    expect(stdout).toContain('Pemba › Boats');
    const tooSmall = await dhr(['ask', 'When is the clove harvest?', '--context', '2', '--mode', 'LEXICAL'], env);
    expect(tooSmall.code).toBe(1);
    expect(tooSmall.stderr).toMatch(/tokens: a budget of 2 holds no block; the smallest block here holds \d+ tokens/);
  });

  it('refuses bad input with the argument named and exit code 1', async () => {
    const { code, stderr } = await dhr(['ask', 'x'.repeat(2001)], env);
    expect(code).toBe(1);
    expect(stderr).toMatch(/question/);
    expect((await dhr(['ask', 'q', '--alpha', '2'], env)).stderr).toMatch(/--alpha.*must be a number from 0 to 1/);
  });
});

describe('dhr ask --url', () => {
  const server = useTestServer();
  beforeAll(async () => {
    const r = await server.post(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created } }`, { d: [{ markdown: NOTES }] });
    expect(r.body.data.ingestDocuments.created).toBe(1);
  });

  it('asks a running server', async () => {
    const { code, stdout } = await dhr(['ask', 'In which month is the harvest?', '--url', server.url, '--k2', '1'], {});
    expect(code).toBe(0);
    // A server without encoders answers with BM25 (and says so on stderr).
    expect(stdout).toMatch(/^In which month is the harvest\?\nLEXICAL · /);
    expect(stdout).toContain('1. Pemba › Harvest\n   harvest month: **October**; crop: cloves.');
  });

  it('reports the server’s error code and message', async () => {
    const { code, stderr } = await dhr(['ask', 'q', '--url', server.url, '--mode', 'FLAT'], {});
    expect(code).toBe(1);
    expect(stderr).toMatch(/mode FLAT needs encoders/);
  });
});
