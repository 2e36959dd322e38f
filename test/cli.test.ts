import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../src/paths';
import { cliStore, dhr } from './helpers/cli';
import { cliEntry } from './helpers/cli-entry';

describe('dhr CLI', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-cli-'));
  let env: Record<string, string>;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ env, drop } = await cliStore(work));
  });
  afterAll(() => drop());

  it('migrates, ingests a directory of mixed files with a summary, reports failures, and counts', async () => {
    const migrated = await dhr(['migrate'], env);
    expect(migrated.stdout).toMatch(/applied: 0001_title_tree/);
    expect((await dhr(['migrate'], env)).stdout).toMatch(/up to date/);

    const dir = join(work, 'corpus');
    mkdirSync(join(dir, 'guides'), { recursive: true });
    writeFileSync(join(dir, 'guides/intro.md'), '# Intro\n\nWelcome text.\n\n## Setup\n\nInstall it. See [[Tree]].\n');
    writeFileSync(join(dir, 'tree.json'), JSON.stringify({ key: 'Tree', title: 'Tree', sections: [{ title: 'Root', text: 'Root text.' }] }));
    writeFileSync(
      join(dir, 'bulk.jsonl'),
      [JSON.stringify({ title: 'Line one', text: 'One.' }), '{not json', JSON.stringify({ title: 'Line three', text: 'Three.' })].join('\n'),
    );
    writeFileSync(join(dir, 'notes.txt'), 'Notes title\nSome plain notes.');
    writeFileSync(join(dir, 'broken.md'), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]));

    const ingested = await dhr(['ingest', dir, '--source', 'cli'], env);
    expect(ingested.code).toBe(2); // failures are reported through the exit code
    expect(ingested.stdout).toMatch(/ingested 7 documents: 5 created, 0 updated, 0 unchanged, 2 failed/);
    expect(ingested.stderr).toMatch(/failed: .*bulk\.jsonl:2.*JSON/);
    expect(ingested.stderr).toMatch(/failed: .*broken\.md.*UTF-8/);
    expect(ingested.stderr).toMatch(/ingest \[#+\] 7\/7/);
    // Ingest embeds what it wrote with the default model.
    expect(ingested.stdout).toMatch(/embedded 5 documents and \d+ passages with use-lite/);
    expect((await dhr(['embed'], env)).stdout).toMatch(/embedded 0 documents and 0 passages/);

    const again = await dhr(['ingest', join(dir, 'tree.json'), '--source', 'cli'], env);
    expect(again.stdout).toMatch(/1 unchanged/);

    const stats = JSON.parse((await dhr(['stats'], env)).stdout);
    expect(stats).toMatchObject({ documents: 5, sections: 2, links: 1, resolvedLinks: 1 });
    expect(stats.database).toBe(process.env.DATABASE_URL ? 'postgres' : 'pglite');
    // passage BM25's candidates: PGlite's BM25 index; the postings on PostgreSQL 15, which has none
    expect(stats.bm25Candidates).toBe(process.env.DATABASE_URL ? 'postings' : 'pg_textsearch');
    expect(stats.models).toEqual([
      {
        name: 'use-lite',
        dimension: 512,
        runtime: 'onnxruntime-node',
        source: 'use-lite',
        roles: ['questionDocument', 'document', 'questionPassage', 'passage'],
        documents: 5,
        staleDocuments: 0,
        passages: stats.passages,
        // ingest stored every passage's sentence vectors too
        sentencePassages: stats.passages,
      },
    ]);
  });

  it('rebuild-bm25 rebuilds the postings and statistics to what the ingest left', async () => {
    const stats = JSON.parse((await dhr(['stats'], env)).stdout);
    const rebuilt = await dhr(['rebuild-bm25'], env);
    expect(rebuilt.code).toBe(0);
    const result = JSON.parse(rebuilt.stdout);
    // Every passage and document was already indexed by the ingest, and is counted again.
    expect(result).toMatchObject({ indexed: 0, passages: stats.passages, documents: stats.documents });
    expect(result.passagePostings).toBeGreaterThan(stats.passages);
    expect(result.terms).toBeGreaterThan(0);
  });

  it('creates, lists and revokes API keys; the key is printed once and never listed', async () => {
    const created = await dhr(['keys', 'create', '--role', 'admin', '--name', 'ops'], env);
    expect(created.code).toBe(0);
    // stdout is the key and nothing else, so `KEY=$(dhr keys create …)` works.
    expect(created.stdout).toMatch(/^dhr_[A-Za-z0-9_-]{43}\n$/);
    const key = created.stdout.trim();
    expect(created.stderr).toMatch(/created admin key \d+ "ops" \(dhr_[A-Za-z0-9_-]{6}…\)/);
    const reader = await dhr(['keys', 'create', '--role', 'reader'], env);
    expect(reader.code).toBe(0);

    const bad = await dhr(['keys', 'create', '--role', 'root'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--role must be one of admin, reader/);
    expect(bad.stdout).toBe('');

    const listed = await dhr(['keys', 'list'], env);
    expect(listed.stdout.split('\n')[0]).toMatch(/^id\s+prefix\s+name\s+role\s+created\s+last used\s+revoked$/);
    expect(listed.stdout).toMatch(new RegExp(`${key.slice(0, 10)}\\s+ops\\s+admin\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+-\\s+-`));
    expect(listed.stdout).toMatch(/reader\s+reader/);
    expect(listed.stdout).not.toContain(key);

    const revoked = await dhr(['keys', 'revoke', key.slice(0, 10)], env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/revoked key \d+ "ops"/);
    expect((await dhr(['keys', 'list'], env)).stdout).toMatch(/ops\s+admin\s+\S+\s+-\s+\d{4}-\S+Z/);
    const missing = await dhr(['keys', 'revoke', '9999'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no key with id or prefix "9999"/);
  });

  it('serve --demo prints a fresh admin key that runs mutations', async () => {
    const root = packageRoot();
    const child = spawn(process.execPath, [...cliEntry(root), 'serve', '--demo', '--port', '0'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no demo key in time; stderr: ${stderr}`)), 110_000);
        child.stderr.on('data', () => {
          if (/demo admin key[^\n]*\n[^\n]*curl/.test(stderr)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', () => reject(new Error(`serve exited: ${stderr}`)));
      });
      const url = /ready at (\S+)/.exec(stdout)![1];
      const key = /(dhr_[A-Za-z0-9_-]{43})/.exec(stderr)![1];
      expect(stderr).toContain(`-H 'Authorization: Bearer ${key}'`);
      const mutation = { query: 'mutation { ingestDocuments(documents: [{ title: "From demo", text: "Hi." }]) { created } }' };
      const post = (headers: Record<string, string>) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(mutation) });
      expect(await (await post({ authorization: `Bearer ${key}` })).json()).toEqual({ data: { ingestDocuments: { created: 1 } } });
      const anonymous = (await (await post({})).json()) as { errors: { extensions: { code: string } }[] };
      expect(anonymous.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect((await dhr(['keys', 'list'], env)).stdout).toMatch(/demo\s+admin/);
  }, 150_000);

  it('answers an unknown command with usage and a non-zero exit', async () => {
    const result = await dhr(['frobnicate'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unknown command "frobnicate"/);
    expect(result.stderr).toMatch(/usage: dhr/i);
  });
});
