/**
 * `dhr adapt` and `dhr adapters` end to end (real processes, the suite's database, a tiny model the
 * test builds): train on a pairs file over the stored vectors, register and activate, list, roll
 * back; a bad line is refused with its number and stores nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrainingPair } from '../src/adapters/pairs-file';
import { dhr } from './helpers/cli';
import { createProcessStore, type ProcessStore } from './helpers/database';
import { writeTinyModel } from './helpers/tiny-model';

describe('dhr adapt / adapters', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-cli-adapt-'));
  let store: ProcessStore;
  let env: Record<string, string>;

  beforeAll(async () => {
    store = await createProcessStore(work);
    env = { ...store.env, ENCODER: await writeTinyModel(work, 'tiny-adapt') };
  });
  afterAll(async () => {
    await store.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('trains, registers, activates, lists and rolls back an adapter', async () => {
    const words = ['river', 'paris', 'city', 'the', 'of'];
    const docs = Array.from({ length: 8 }, (_, i) => ({
      title: `the city ${i}`,
      sections: Array.from({ length: 4 }, (_, s) => ({ title: words[s], text: `the ${words[(i + s) % 5]} of ${words[(i * s) % 5]} ${i} ${s}.` })),
    }));
    writeFileSync(join(work, 'docs.json'), JSON.stringify(docs));
    expect((await dhr(['ingest', join(work, 'docs.json')], env)).code).toBe(0);

    const { db, close } = await store.open();
    const passages = await db.query<{ id: number; documentId: number; text: string }>('SELECT id, document_id AS "documentId", text FROM passages ORDER BY id');
    await close();
    const passage = (p: (typeof passages)[number]) => ({ passageId: p.id, documentId: p.documentId, sectionId: null, titlePath: ['T'], text: p.text });
    const pairs: TrainingPair[] = passages.map((p, i) => ({
      kind: 'section-path',
      question: `${p.text} ${words[i % 5]}`,
      questionPassageId: null,
      positive: passage(p),
      positiveDocument: { documentId: p.documentId, title: 'T' },
      negatives: {
        bm25: [],
        inDoc: passages.filter((o) => o.documentId === p.documentId && o.id !== p.id).map(passage),
        inSec: [],
        documents: [{ documentId: passages.find((o) => o.documentId !== p.documentId)!.documentId, title: 'U' }],
      },
    }));
    writeFileSync(join(work, 'pairs.jsonl'), pairs.map((p) => JSON.stringify(p)).join('\n'));
    writeFileSync(join(work, 'bad.jsonl'), [JSON.stringify(pairs[0]), '{"kind": "feedback"}'].join('\n'));

    const bad = await dhr(['adapt', '--pairs', join(work, 'bad.jsonl'), '--name', 'bad'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/adapt: .*bad\.jsonl:2: question must be a non-empty string/);

    const trained = await dhr(['adapt', '--pairs', join(work, 'pairs.jsonl'), '--name', 'cli-adapter', '--epochs', '3', '--lr', '0.01', '--activate'], env);
    expect(trained.stderr).toMatch(/read 32 pairs/);
    expect(trained.stderr).toMatch(/train passage \[#+\.*\] \d\/3/); // early stopping may end it before the last epoch
    expect(trained.stderr).toMatch(/passage epoch 1: train loss [\d.]+, held-out loss [\d.]+, held-out recall@1 [\d.]+/);
    expect(trained.stdout).toMatch(/document: 29 training \/ 3 held-out pairs \(0 skipped/);
    expect(trained.stdout).toMatch(/passage: 29 training \/ 3 held-out pairs \(0 skipped/);
    expect(trained.stdout).toMatch(/adapter "cli-adapter" registered and active/);
    expect(trained.code).toBe(0);

    const listed = JSON.parse((await dhr(['adapters'], env)).stdout);
    expect(listed).toEqual([
      expect.objectContaining({
        name: 'cli-adapter',
        active: true,
        dimension: 8,
        levels: ['document', 'passage'],
        training: expect.objectContaining({ pairs: 32 }),
      }),
    ]);
    const none = await dhr(['adapters', 'activate', 'none'], env);
    expect(none.code).toBe(0);
    expect(none.stderr).toContain('no adapter is active');
    expect(JSON.parse(none.stdout)[0].active).toBe(false);
    const unknown = await dhr(['adapters', 'activate', 'nope'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no adapter named "nope"/);
    const again = await dhr(['adapters', 'activate', 'cli-adapter'], env);
    expect(JSON.parse(again.stdout)[0].active).toBe(true);
    const refused = await dhr(['adapters', 'drop', 'cli-adapter'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/adapter "cli-adapter" is active; activate another adapter, or none/);
    expect((await dhr(['adapters', 'activate', 'none'], env)).code).toBe(0);
    const dropped = await dhr(['adapters', 'drop', 'cli-adapter'], env);
    expect(dropped).toMatchObject({ code: 0 });
    expect(dropped.stderr).toContain('adapter cli-adapter dropped');
    expect(JSON.parse(dropped.stdout)).toEqual([]);
  }, 300_000);
});
