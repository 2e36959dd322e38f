import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../src/errors';
import { compactPair } from '../src/pipeline/adapt';
import { ingestDocuments } from '../src/pipeline/ingest';
import type { Database } from '../src/store/db';
import { indexLexical } from '../src/store/lexical';
import { importFeedback, readFeedbackFile } from '../src/training/feedback';
import { feedbackPairs } from '../src/training/mine';
import type { TrainingPair } from '../src/training/pair';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { cliStore, dhr } from './helpers/cli';

/** Judged pairs: the admin mutation, the JSONL import (all or nothing), and the pairs they give. */

const RECORD = `mutation($q: String!, $p: ID!, $r: Boolean!) { recordFeedback(question: $q, passageId: $p, relevant: $r) { id question passageId relevant createdAt } }`;

const DOCS = [
  {
    key: 'tea',
    title: 'Tea',
    abstract: 'Tea is an aromatic drink prepared from cured leaves.',
    sections: [{ title: 'History', text: 'Tea drinking began in China. It spread along trade routes to Europe.' }],
  },
  {
    key: 'coffee',
    title: 'Coffee',
    abstract: 'Coffee is a drink brewed from roasted beans.',
    sections: [{ title: 'Cultivation', text: 'Coffee grows in the tropics on shrubs.' }],
  },
];

async function passageIds(db: Database): Promise<number[]> {
  return (await db.query<{ id: number }>('SELECT id FROM passages ORDER BY id')).map((r) => r.id);
}
const feedbackCount = async (db: Database) => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM feedback'))[0].n;

async function collect(db: Database): Promise<TrainingPair[]> {
  const pairs: TrainingPair[] = [];
  for await (const p of feedbackPairs(db, { seed: 1 })) pairs.push(p);
  return pairs;
}

const IMPORT = `mutation($j: [FeedbackJudgementInput!]!) { importFeedback(judgements: $j) { imported relevant } }`;

describe('feedback', () => {
  let api: TestApi;
  let db: Database;
  let ids: number[];
  let work: string;

  beforeAll(async () => {
    api = await createTestApi();
    db = api.testDb.db;
    await ingestDocuments(db, DOCS, { maxWords: 8, maxDocumentBytes: 1_000_000 });
    await indexLexical(db);
    ids = await passageIds(db);
    work = await mkdtemp(join(tmpdir(), 'dhr-feedback-'));
  });
  afterAll(async () => {
    await api.close();
    await rm(work, { recursive: true, force: true });
  });

  it('records a judgement for admins; an unknown passage is NOT_FOUND naming passageId, and nothing is stored', async () => {
    const { recordFeedback } = dataOf(await api.exec(RECORD, { q: 'where did tea drinking begin?', p: String(ids[2]), r: true }));
    expect(recordFeedback).toMatchObject({ question: 'where did tea drinking begin?', passageId: String(ids[2]), relevant: true });
    expect(await feedbackCount(db)).toBe(1);

    const unknown = await api.exec(RECORD, { q: 'anything', p: '999999', r: true });
    expect(unknown.errors?.[0]).toMatchObject({ message: 'passageId: no passage with id 999999', extensions: { code: 'NOT_FOUND', argument: 'passageId' } });
    const malformed = await api.exec(RECORD, { q: 'anything', p: 'x1', r: true });
    expect(malformed.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'passageId' });
    const empty = await api.exec(RECORD, { q: '   ', p: String(ids[0]), r: true });
    expect(empty.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'question' });
    expect((await api.execAs(null, RECORD, { q: 'q', p: String(ids[0]), r: true })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const reader = await api.execAs({ keyId: 9, role: 'reader', name: 'app' }, RECORD, { q: 'q', p: String(ids[0]), r: true });
    expect(reader.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await feedbackCount(db)).toBe(1);
  });

  it('turns relevant judgements into pairs whose negatives leave out every passage judged relevant', async () => {
    const q = 'where did tea drinking begin?';
    dataOf(await api.exec(RECORD, { q, p: String(ids[3]), r: true }));
    dataOf(await api.exec(RECORD, { q: 'coffee beans', p: String(ids[4]), r: true }));
    // judged twice: counts once; judged relevant then not: withdrawn
    dataOf(await api.exec(RECORD, { q, p: String(ids[3]), r: true }));
    dataOf(await api.exec(RECORD, { q: 'coffee beans', p: String(ids[4]), r: false }));
    const pairs = await collect(db);
    expect(pairs.map((p) => [p.kind, p.question, p.positive.passageId])).toEqual([
      ['feedback', q, ids[2]],
      ['feedback', q, ids[3]],
    ]);
    for (const p of pairs) {
      const negatives = [...p.negatives.bm25, ...p.negatives.inDoc, ...p.negatives.inSec].map((x) => x.passageId);
      expect(negatives).not.toContain(ids[2]);
      expect(negatives).not.toContain(ids[3]);
      expect(p.questionPassageId).toBeNull();
    }
    expect(pairs[0].negatives.bm25.length).toBeGreaterThan(0);
  });

  it("exports passages judged not relevant as the question's judged negatives, and adapt takes them first", async () => {
    const q = 'where did tea drinking begin?';
    const wrong = ids.slice(-2); // the coffee passages
    for (const p of wrong) dataOf(await api.exec(RECORD, { q, p: String(p), r: false }));
    const pairs = await collect(db);
    expect(pairs.map((p) => p.positive.passageId)).toEqual([ids[2], ids[3]]);
    for (const p of pairs) {
      expect(p.negatives.judged?.map((x) => x.passageId)).toEqual([...wrong].sort((a, b) => a - b));
      expect(p.negatives.judged?.[0].text.length).toBeGreaterThan(0);
    }
    // A judged negative leads the passage negatives training reads, before In-Sec/In-Doc/BM25.
    const compacted = compactPair(pairs[0], 3);
    expect(compacted.negatives.passage.slice(0, 2)).toEqual(pairs[0].negatives.judged!.map((x) => x.passageId));
    expect(compacted.negatives.passage).toHaveLength(
      Math.min(
        3,
        new Set([...pairs[0].negatives.judged!, ...pairs[0].negatives.inSec, ...pairs[0].negatives.inDoc, ...pairs[0].negatives.bm25].map((x) => x.passageId))
          .size,
      ),
    );
    expect(new Set(compacted.negatives.passage).size).toBe(compacted.negatives.passage.length);
  });

  it('imports a JSONL file in one transaction: a bad line names its number and stores nothing', async () => {
    // As dhr feedback import does in-process: every line read and checked, then one transaction.
    const importFeedbackFile = async (_db: Database, file: string) => {
      const items = await readFeedbackFile(file);
      return importFeedback(
        _db,
        items.map((i) => i.input),
        (i) => `line ${items[i].line}`,
      );
    };
    const before = await feedbackCount(db);
    const good = join(work, 'good.jsonl');
    await writeFile(
      good,
      [
        JSON.stringify({ question: 'what is coffee?', passageId: ids[4], relevant: true }),
        '',
        JSON.stringify({ question: 'what is coffee?', passageId: String(ids[0]), relevant: false }),
      ].join('\n'),
    );
    expect(await importFeedbackFile(db, good)).toEqual({ imported: 2, relevant: 1 });
    expect(await feedbackCount(db)).toBe(before + 2);

    const cases: [string[], RegExp, string][] = [
      [
        [JSON.stringify({ question: 'a', passageId: ids[0], relevant: true }), JSON.stringify({ question: 'b', passageId: 999999, relevant: true })],
        /^line 2: no passage with id 999999$/,
        'NOT_FOUND',
      ],
      [[JSON.stringify({ question: 'a', passageId: ids[0], relevant: true }), '{not json'], /^line 2: not JSON$/, 'BAD_USER_INPUT'],
      [[JSON.stringify({ question: 'a', passageId: ids[0], relevant: 'yes' })], /^line 1: relevant must be true or false$/, 'BAD_USER_INPUT'],
      [[JSON.stringify({ question: 'a', passageId: -3, relevant: true })], /^line 1: passageId must be a positive integer id$/, 'BAD_USER_INPUT'],
      [[JSON.stringify({ question: '', passageId: ids[0], relevant: true })], /^line 1: question must not be empty$/, 'BAD_USER_INPUT'],
      [[JSON.stringify({ question: 'a', passageId: ids[0], relevant: true, extra: 1 })], /^line 1: unknown field "extra"$/, 'BAD_USER_INPUT'],
    ];
    for (const [lines, message, code] of cases) {
      const file = join(work, 'bad.jsonl');
      await writeFile(file, lines.join('\n'));
      const error = await importFeedbackFile(db, file).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).message).toMatch(message);
      expect((error as DomainError).code).toBe(code);
    }
    // more lines than one insert batch, the bad one last: the first batches are rolled back too
    const long = join(work, 'long.jsonl');
    const rows = Array.from({ length: 1200 }, (_, i) => JSON.stringify({ question: `q${i}`, passageId: ids[i % ids.length], relevant: i % 2 === 0 }));
    await writeFile(long, [...rows, JSON.stringify({ question: 'last', passageId: 999999, relevant: true })].join('\n'));
    await expect(importFeedbackFile(db, long)).rejects.toThrow(/^line 1201: no passage with id 999999$/);
    await expect(importFeedbackFile(db, join(work, 'missing.jsonl'))).rejects.toThrow(/cannot read .*missing\.jsonl/);
    expect(await feedbackCount(db)).toBe(before + 2);
  });

  it('imports judgements through the API in one transaction: one bad judgement refuses them all, named by its index', async () => {
    const before = await feedbackCount(db);
    const good = [
      { question: 'what is tea?', passageId: String(ids[0]), relevant: true },
      { question: 'what is tea?', passageId: String(ids[1]), relevant: false },
    ];
    expect(dataOf(await api.exec(IMPORT, { j: good })).importFeedback).toEqual({ imported: 2, relevant: 1 });
    expect(await feedbackCount(db)).toBe(before + 2);
    const unknown = await api.exec(IMPORT, { j: [...good, { question: 'x', passageId: '999999', relevant: true }] });
    expect(unknown.errors?.[0]).toMatchObject({
      message: 'judgements[2]: no passage with id 999999',
      extensions: { code: 'NOT_FOUND', argument: 'passageId' },
    });
    const empty = await api.exec(IMPORT, { j: [...good, { question: '  ', passageId: String(ids[0]), relevant: true }] });
    expect(empty.errors?.[0]).toMatchObject({
      message: 'judgements[2]: question must not be empty',
      extensions: { code: 'BAD_USER_INPUT', argument: 'question' },
    });
    const malformed = await api.exec(IMPORT, { j: [{ question: 'x', passageId: 'x1', relevant: true }] });
    expect(malformed.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'judgements[0].passageId' });
    const reader = await api.execAs({ keyId: 9, role: 'reader', name: 'app' }, IMPORT, { j: good });
    expect(reader.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(dataOf(await api.exec(IMPORT, { j: [] })).importFeedback).toEqual({ imported: 0, relevant: 0 });
    expect(await feedbackCount(db)).toBe(before + 2);
  });

  it('goes with its passage', async () => {
    await db.query(`DELETE FROM documents WHERE key = 'coffee'`);
    expect(await db.query(`SELECT 1 FROM feedback f LEFT JOIN passages p ON p.id = f.passage_id WHERE p.id IS NULL`)).toEqual([]);
  });
});

describe('dhr feedback import', () => {
  let work: string;
  let store: Awaited<ReturnType<typeof cliStore>>;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'dhr-feedback-cli-'));
    store = await cliStore(work);
  });
  afterAll(async () => {
    await store.drop();
    await rm(work, { recursive: true, force: true });
  });

  it('imports every line or none, and says which line is wrong', async () => {
    const docs = join(work, 'docs.json');
    await writeFile(docs, JSON.stringify(DOCS));
    expect((await dhr(['ingest', docs, '--no-embed'], store.env)).code).toBe(0);
    const good = join(work, 'good.jsonl');
    await writeFile(
      good,
      `${JSON.stringify({ question: 'tea?', passageId: 1, relevant: true })}\n${JSON.stringify({ question: 'tea?', passageId: 2, relevant: false })}\n`,
    );
    const ok = await dhr(['feedback', 'import', good], store.env);
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toMatch(/imported 2 judgements \(1 relevant, 1 not relevant\)/);
    const bad = join(work, 'bad.jsonl');
    await writeFile(bad, `${JSON.stringify({ question: 'tea?', passageId: 1, relevant: true })}\n{"question": 3}\n`);
    const refused = await dhr(['feedback', 'import', bad], store.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/feedback import: line 2: question must be a string/);
    const pairs = await dhr(['pairs', '--kinds', 'feedback', '--min-pairs', '1'], store.env);
    expect(
      pairs.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).question),
    ).toEqual(['tea?']);
  }, 120_000);
});
