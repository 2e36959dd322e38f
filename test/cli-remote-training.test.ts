/**
 * dhr tune, dhr pairs and dhr feedback import with --url print what they print on the local store.
 * Real processes: the CLI against a real server over HTTP (with encoders: a tune runs its
 * questions) on the suite's database, and the CLI on a store of its own sent the same commands
 * (PGlite), or on PostgreSQL on the server's own database (there the local ingest writes
 * documents concurrently, so a second store would number them otherwise). A tiny model built by
 * the test keeps a tune of the small corpus to seconds.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { registerModelFromPath } from '../src/pipeline/jobs/models';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { startServer } from '../src/server';
import { createApiKey } from '../src/store/keys';
import { dhr, useCliStore } from './helpers/cli';
import { createTestDatabase, type TestDatabase } from './helpers/database';
import { captureLog } from './helpers/log-capture';
import { writeTinyModel } from './helpers/tiny-model';
import { RIVER_DOCS } from './helpers/river-corpus';

type Run = Awaited<ReturnType<typeof dhr>>;

const DOCS = RIVER_DOCS;

describe('dhr tune | pairs | feedback import with --url print what they print locally', () => {
  const local = useCliStore('dhr-cli-remote-training-');
  let t: TestDatabase | undefined;
  let models: ModelRegistry | undefined;
  let stop: (() => Promise<void>) | undefined;
  let url = '';
  let adminKey = '';
  const log = captureLog();
  const remote = (args: string[]) => dhr([...args, '--url', url], { DHR_API_KEY: adminKey });
  /** Whether the local commands have a store of their own (PGlite) or open the server's (PostgreSQL). */
  const separate = () => t!.url === undefined;
  const localEnv = () => (t!.url === undefined ? local.env : { DATABASE_URL: t!.url });
  const locally = (args: string[]) => dhr(args, localEnv());
  const both = async (args: string[]): Promise<[Run, Run]> => [await locally(args), await remote(args)];
  /** A server's refusal is the local one with the error code after it. */
  const refusedAlike = ([here, there]: [Run, Run], code: string) => {
    expect(here.code).toBe(1);
    expect(there.code).toBe(1);
    expect(there.stderr).toBe(here.stderr.replace(/\n$/, ` (${code})\n`));
  };
  const feedbackRows = async () => (await t!.db.query<{ n: number }>('SELECT count(*)::int AS n FROM feedback'))[0].n;

  beforeAll(async () => {
    t = await createTestDatabase();
    adminKey = (await createApiKey(t.db, { role: 'admin', name: 'test admin' })).key;
    models = new ModelRegistry(t.db);
    ({ url, stop } = await startServer(t.db, loadConfig({ PORT: '0', JOB_WORKERS: '1', JOB_POLL_MS: '50' }), models, { logDestination: log.destination }));
    // The same model, active for every role, and the same corpus on both stores (so the same ids).
    const folder = await writeTinyModel(local.work, 'tiny');
    await registerModelFromPath(t.db, folder);
    await writeFile(join(local.work, 'rivers.json'), JSON.stringify(DOCS));
    const setup = [
      ['models', 'activate', 'tiny'],
      ['ingest', join(local.work, 'rivers.json')],
    ];
    for (const args of setup) expect((await remote(args)).code).toBe(0);
    if (separate()) {
      expect((await dhr(['models', 'register', folder], local.env)).code).toBe(0);
      for (const args of setup) expect((await dhr(args, local.env)).code).toBe(0);
    }
  }, 300_000);
  afterAll(async () => {
    await stop?.();
    await models?.close();
    await t?.drop();
  });

  it('tune [--apply]: the server runs it, the command follows the run and prints the same report', async () => {
    /** stderr without the progress bars and the time taken (they differ from run to run). */
    const said = (run: Run) => run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('tune [') && !/^tune: \d+ points run in/.test(line));
    const [dry, dryThere] = await both(['tune', '--per-kind', '12']);
    expect(dry).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^HYBRID_HIERARCHICAL: 36 questions \(section-path 12, document-title 12, cloze 12\)/),
    });
    expect(dryThere).toMatchObject({ code: 0, stdout: dry.stdout });
    expect(said(dryThere)).toEqual(said(dry));
    expect(said(dry)).toEqual(['dry run: nothing stored (--apply stores the choice)']);
    const points = /tune: (\d+) points run in/.exec(dry.stderr)![1];
    expect(dryThere.stderr).toContain(`tune: ${points} points run in `);

    // The same seed and store: the same decision as the dry run (on one store, applied through the server alone).
    const apply = ['tune', '--per-kind', '12', '--apply'];
    const appliedThere = await remote(apply);
    expect(appliedThere).toMatchObject({ code: 0, stdout: dry.stdout });
    expect(said(appliedThere)).toEqual([
      expect.stringMatching(/^(stored as retrieval settings version 1: \{.+\}|nothing stored: the settings in force stay)$/),
    ]);
    if (separate()) {
      const applied = await locally(apply);
      expect(applied).toMatchObject({ code: 0, stdout: dry.stdout });
      expect(said(applied)).toEqual(said(appliedThere));
      const [settings, settingsThere] = await both(['settings']);
      const { createdAt: _, ...stored } = JSON.parse(settings.stdout);
      expect(JSON.parse(settingsThere.stdout)).toMatchObject(stored);
    }

    // A tune the server's run refuses is its message alone, as locally.
    const [lexical, lexicalThere] = await both(['tune', '--mode', 'LEXICAL']);
    expect(lexical).toMatchObject({ code: 1, stderr: expect.stringMatching(/^tune: mode LEXICAL has no weights to tune/) });
    expect(lexicalThere).toEqual(lexical);

    // Some sources of pseudo-questions and labelled questions (a file read here): the same report either way.
    const labelled = join(local.work, 'labelled.jsonl');
    await writeFile(
      labelled,
      `${JSON.stringify({ question: 'which river shelters salmon and otters?', documentKeys: ['rhine'] })}\n${JSON.stringify({ question: 'barges of grain and salt', documentKeys: ['elbe', 'oder'] })}\n`,
    );
    const [some, someThere] = await both(['tune', '--per-kind', '14', '--kinds', 'cloze,section-path', '--questions', labelled]);
    expect(some).toMatchObject({ code: 0, stdout: expect.stringMatching(/^HYBRID_HIERARCHICAL: 30 questions \(section-path 14, cloze 14, labelled 2\)/) });
    expect(someThere).toMatchObject({ code: 0, stdout: some.stdout });
    await writeFile(labelled, `${JSON.stringify({ question: 'no answer given' })}\n`);
    const [unanswered, unansweredThere] = await both(['tune', '--questions', labelled]);
    expect(unanswered).toMatchObject({ code: 1, stderr: `tune: ${labelled} line 1 needs a question and passageIds or documentKeys\n` });
    expect(unansweredThere).toMatchObject({ code: 1, stderr: unanswered.stderr });
    // The range is the API's (QUESTIONS_PER_KIND): refused before anything is sent.
    expect(await remote(['tune', '--per-kind', '2000'])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: option '--per-kind <n>' argument '2000' is invalid\. must be an integer from 1 to 1000\n/),
    });
  }, 300_000);

  it('pairs: the same JSONL and counts, and the same refusals', async () => {
    for (const args of [['pairs'], ['pairs', '--kinds', 'section-path,document-title', '--limit', '5', '--seed', '3']]) {
      const [here, there] = await both(args);
      expect(here.code).toBe(0);
      expect(there).toMatchObject({ code: 0, stdout: here.stdout });
      const last = (run: Run) => run.stderr.split('\n').filter((line) => line.startsWith('pairs: '));
      expect(last(there)).toEqual(last(here));
    }
    const [limited] = await both(['pairs', '--limit', '5']);
    expect(limited.stderr).toContain('pairs: 10 written (dual-link 0, co-mention 0, section-path 5, document-title 5, feedback 0)');
    // --out: the same file, written whole
    const [here, there] = [join(local.work, 'here.jsonl'), join(local.work, 'there.jsonl')];
    expect((await dhr(['pairs', '--out', here], localEnv())).code).toBe(0);
    expect((await remote(['pairs', '--out', there])).stderr).toContain(`written to ${there} `);
    expect(await readFile(there, 'utf8')).toBe(await readFile(here, 'utf8'));

    refusedAlike(await both(['pairs', '--kinds', 'co-mention,dual-link']), 'BAD_USER_INPUT');
    refusedAlike(await both(['pairs', '--min-pairs', '1000']), 'BAD_USER_INPUT');
    expect(await remote(['pairs', '--negatives', '2'])).toMatchObject({
      code: 1,
      stderr: "pairs: with --url the server mines with its own settings: --negatives (the server's: 4) cannot be sent\n",
    });
  }, 300_000);

  it('feedback import: the same count; a bad file changes nothing on the server either', async () => {
    const file = join(local.work, 'feedback.jsonl');
    const lines = (rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;
    await writeFile(
      file,
      lines([
        { question: 'which river flows past old towns?', passageId: 2, relevant: true },
        { question: 'which river flows past old towns?', passageId: 3, relevant: false },
      ]),
    );
    const [imported, importedThere] = await both(['feedback', 'import', file]);
    expect(imported).toEqual({ code: 0, stdout: 'imported 2 judgements (1 relevant, 1 not relevant)\n', stderr: '' });
    expect(importedThere).toEqual(imported);
    const recorded = await feedbackRows();
    expect(recorded).toBe(separate() ? 2 : 4);
    const [pairs, pairsThere] = await both(['pairs', '--kinds', 'feedback', '--min-pairs', '1']);
    expect(pairsThere).toMatchObject({ code: 0, stdout: pairs.stdout });
    expect(JSON.parse(pairs.stdout)).toMatchObject({ kind: 'feedback', positive: { passageId: 2 }, negatives: { judged: [{ passageId: 3 }] } });

    // A passage the store lacks (after good lines), a bad line: refused with the line named, nothing recorded.
    await writeFile(
      file,
      lines([
        { question: 'a', passageId: 2, relevant: true },
        { question: 'b', passageId: 99_999, relevant: true },
      ]),
    );
    refusedAlike(await both(['feedback', 'import', file]), 'NOT_FOUND');
    await writeFile(file, `${lines([{ question: 'a', passageId: 2, relevant: true }])}{"question": "b"\n`);
    refusedAlike(await both(['feedback', 'import', file]), 'BAD_USER_INPUT');
    refusedAlike(await both(['feedback', 'import', join(local.work, 'missing.jsonl')]), 'BAD_USER_INPUT');
    expect(await feedbackRows()).toBe(recorded);
  }, 300_000);
});
