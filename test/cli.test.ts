import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dhr } from './helpers/cli';
import { createTestDatabase, type TestDatabase } from './helpers/database';

describe('dhr CLI', () => {
  let t: TestDatabase | undefined;
  let env: Record<string, string>;
  const work = mkdtempSync(join(tmpdir(), 'dhr-cli-'));

  beforeAll(async () => {
    if (process.env.DATABASE_URL) {
      t = await createTestDatabase({ migrated: false });
      env = { DATABASE_URL: t.url! };
    } else {
      env = { DATA_DIR: join(work, 'data') };
    }
  });
  afterAll(() => t?.drop());

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
      },
    ]);
  });

  it('answers an unknown command with usage and a non-zero exit', async () => {
    const result = await dhr(['frobnicate'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/unknown command "frobnicate"/);
    expect(result.stderr).toMatch(/usage: dhr/);
  });
});
