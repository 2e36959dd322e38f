/**
 * The CLI beside a running `dhr serve` on the embedded store: the server records in
 * the data folder's lock where it listens; `dhr ask` and the other read-only commands find it
 * there and ask it over GraphQL, saying so; commands that would open the store are refused with
 * the server's address and what to do; once the server stops, the CLI opens the store itself.
 * Real processes, a real PGlite folder (whatever DATABASE_URL says: the lock is the embedded
 * store's), the default encoder, and a server that reads only with a key (READ_ACCESS=key).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_NAME } from '../src/store/data-lock';
import { dhr } from './helpers/cli';
import { startServe, type ServeProcess } from './helpers/serve';

const NOTES = {
  'pemba.md': '# Pemba\n\n## Harvest\n\nPemba is an island. harvest month: October; crop: cloves.\n\n## Boats\n\nDhows carry the cloves to Zanzibar.\n',
  'tides.md':
    '# Tides\n\nThe moon pulls the oceans, which makes the tides rise and fall twice a day.\n\n## Spring tides\n\nAt new and full moon the sun and the moon pull together: the highest tides.\n',
  'lamu.md': '# Lamu\n\n## Old town\n\nLamu Old Town is the oldest Swahili settlement in Kenya, built of coral stone and mangrove timber.\n',
};
const QUESTION = 'When is the clove harvest on Pemba?';
const RETRIEVE = `query($q: String!) { retrieve(question: $q, k2: 4) { mode passages { rank score passage { id titlePath } } } }`;

interface Retrieved {
  mode: string;
  passages: { rank: number; score: number; passage: { id: string; titlePath: string[] } }[];
}

describe('the CLI while dhr serve holds the embedded store', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-served-'));
  const dataDir = join(work, 'data');
  const env = { DATA_DIR: dataDir, ENCODER_THREADS: '1', READ_ACCESS: 'key' };
  const heldLine = (s: ServeProcess) => `the store in ${dataDir} is held by the server at ${s.url} (pid ${s.child.pid}): asking it`;
  let serve: ServeProcess | undefined;
  let readerKey: string;

  /** What the server's own GraphQL API answers, with the reader key. */
  async function retrieveFromServer(s: ServeProcess): Promise<Retrieved> {
    const response = await fetch(s.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${readerKey}` },
      body: JSON.stringify({ query: RETRIEVE, variables: { q: QUESTION } }),
    });
    const body = (await response.json()) as { data: { retrieve: Retrieved } };
    return body.data.retrieve;
  }

  beforeAll(async () => {
    for (const [name, text] of Object.entries(NOTES)) writeFileSync(join(work, name), text);
    const ingested = await dhr(['ingest', ...Object.keys(NOTES).map((n) => join(work, n))], env);
    expect(ingested.code).toBe(0);
    const created = await dhr(['keys', 'create', '--role', 'reader'], env);
    expect(created.code).toBe(0);
    readerKey = created.stdout.trim();
    serve = await startServe(env, 200_000);
  }, 400_000);

  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('records in the lock where it listens', () => {
    const owner = JSON.parse(readFileSync(join(dataDir, `${LOCK_NAME}.owner`), 'utf8'));
    expect(owner).toEqual({ pid: serve!.child.pid, host: hostname(), server: { url: serve!.url } });
  });

  it('dhr ask asks the server and answers the passages its GraphQL retrieve answers', async () => {
    const asked = await dhr(['ask', QUESTION, '--k2', '4', '--json'], { ...env, DHR_API_KEY: readerKey });
    expect(asked.stderr).toContain(heldLine(serve!));
    expect(asked.code).toBe(0);
    const cli = JSON.parse(asked.stdout) as Retrieved;
    const direct = await retrieveFromServer(serve!);
    expect(direct.passages.length).toBeGreaterThan(1);
    expect(cli.mode).toBe(direct.mode);
    expect(cli.passages.map((p) => [p.rank, p.passage.id, p.passage.titlePath])).toEqual(
      direct.passages.map((p) => [p.rank, p.passage.id, p.passage.titlePath]),
    );
    cli.passages.forEach((p, i) => expect(p.score).toBeCloseTo(direct.passages[i].score, 9));
    expect(cli.passages[0].passage.titlePath).toEqual(['Pemba', 'Harvest']);
  });

  it('says that the server needs a key when none is configured', async () => {
    const asked = await dhr(['ask', QUESTION], env);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toBe('');
    expect(asked.stderr).toContain(heldLine(serve!));
    expect(asked.stderr).toContain('it answers only requests with an API key (READ_ACCESS=key); none is configured: set DHR_API_KEY or pass --key');
    // keys list needs an admin key, and the refusal says so.
    const listed = await dhr(['keys', 'list'], env);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('`dhr keys list` through it needs an admin key; none is configured');
  });

  it('the other read-only commands ask the server too', async () => {
    const withKey = { ...env, DHR_API_KEY: readerKey };
    const stats = await dhr(['stats'], withKey);
    expect(stats.stderr).toContain(heldLine(serve!));
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({
      documents: 3,
      sections: 4,
      pending: { unembeddedPassages: 0 },
      models: [{ name: 'use-lite', roles: ['questionDocument', 'document', 'questionPassage', 'passage'] }],
    });
    const models = await dhr(['models'], withKey);
    expect(models.code).toBe(0);
    expect(JSON.parse(models.stdout)).toEqual([expect.objectContaining({ name: 'use-lite', documents: 3, staleDocuments: 0 })]);
    const jobs = await dhr(['jobs', 'list', '--status', 'running'], withKey);
    expect(jobs.code).toBe(0);
    expect(JSON.parse(jobs.stdout)).toEqual([]);
    const settings = await dhr(['settings'], withKey);
    expect(settings.code).toBe(0);
    expect(JSON.parse(settings.stdout)).toMatchObject({ version: null, modes: { HYBRID_HIERARCHICAL: { lambda: expect.stringMatching(/\(mode\)$/) } } });
    expect(await dhr(['settings', 'history'], withKey)).toMatchObject({ code: 0, stdout: '[]\n' });
  });

  it('refuses a command that would open the store, naming the server and its --url form', async () => {
    const ingest = await dhr(['ingest', join(work, 'lamu.md')], env);
    expect(ingest.code).toBe(1);
    expect(ingest.stdout).toBe('');
    expect(ingest.stderr).toContain(`dhr ingest: the store in ${dataDir} is held by the server at ${serve!.url} (pid ${serve!.child.pid})`);
    expect(ingest.stderr).toContain(`dhr ingest <paths…> --url ${serve!.url} --key <admin key>`);
    const set = await dhr(['settings', 'set', '--mode', 'HYBRID_HIERARCHICAL', 'lambda=0.3'], env);
    expect(set.code).toBe(1);
    expect(set.stderr).toContain(`dhr settings set --mode <mode> <name=value…> --url ${serve!.url} --key <admin key>`);
    const rollback = await dhr(['settings', 'rollback'], env);
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain(`Send it to the server with an admin key: dhr settings rollback --url ${serve!.url} --key <admin key>`);
    const pairs = await dhr(['pairs'], env);
    expect(pairs.code).toBe(1);
    expect(pairs.stderr).toContain(`dhr pairs [--out <file>] --url ${serve!.url} --key <admin key>`);
    const embed = await dhr(['embed'], env);
    expect(embed.code).toBe(1);
    expect(embed.stderr).toContain('`dhr embed` has no --url form: stop the server (Ctrl-C) and run it again');
    // Nothing changed: the settings are the modes' defaults still, and the server still answers.
    const settings = await dhr(['settings'], { ...env, DHR_API_KEY: readerKey });
    expect(JSON.parse(settings.stdout)).toMatchObject({ version: null });
  });

  it('after the server stops, the CLI opens the store itself and answers the same passages', async () => {
    const before = await retrieveFromServer(serve!);
    serve!.child.kill('SIGTERM');
    expect(await serve!.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, LOCK_NAME))).toBe(false);
    const asked = await dhr(['ask', QUESTION, '--k2', '4', '--json'], env);
    expect(asked.stderr).not.toContain('asking it');
    expect(asked.code).toBe(0);
    const local = JSON.parse(asked.stdout) as Retrieved;
    expect(local.passages.map((p) => p.passage.id)).toEqual(before.passages.map((p) => p.passage.id));
  });
});
