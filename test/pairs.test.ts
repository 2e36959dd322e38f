import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError } from '../src/errors';
import type { DocumentInput } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import { search } from '../src/retrieval/search';
import type { VectorSearch } from '../src/retrieval/sql';
import type { Database } from '../src/store/db';
import { indexLexical } from '../src/store/lexical';
import { minePairs, type MineOptions } from '../src/training/mine';
import type { PairKind, PairPassage, TrainingPair } from '../src/training/pair';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { dhr, cliStore } from './helpers/cli';
import { createTestDatabase } from './helpers/database';
import { prng } from './helpers/prng';

/**
 * The pair miner against brute force: a random linked corpus goes through the real ingest, the
 * expected HLP pairs are computed here from the stored link graph with the paper's definitions, and
 * every negative is checked against its definition (BM25 ones against the LEXICAL mode's ranking).
 */

const WORDS = ['river', 'capital', 'bridge', 'museum', 'harbour', 'mountain', 'castle', 'railway', 'festival', 'island', 'forest', 'market', 'tower', 'valley'];
const N = 12;
const INGEST = { maxWords: 12, maxDocumentBytes: 2_000_000 };

/** Documents d0…d10 link to each other at random and all link to "hub" (the most-linked document). */
function corpus(seed: number): DocumentInput[] {
  const rand = prng(seed);
  const word = () => WORDS[Math.floor(rand() * WORDS.length)];
  const other = (i: number) => {
    const j = Math.floor(rand() * (N - 1));
    return j === i ? (j + 1) % (N - 1) : j;
  };
  const text = (i: number, words: number) => Array.from({ length: words }, () => (rand() < 0.08 ? `[[d${other(i)}|${word()}]]` : word())).join(' ') + '.';
  return Array.from({ length: N }, (_, i): DocumentInput => {
    if (i === N - 1) return { key: 'hub', title: 'Hub', abstract: `${text(i, 10)}`, sections: [{ title: 'About', text: text(i, 20) }] };
    return {
      key: `d${i}`,
      title: `Topic ${i} ${word()}`,
      // documents 3 and 7 have no abstract; every other abstract links to the hub (and one nowhere)
      abstract: i % 4 === 3 ? undefined : `${text(i, 8)} [[hub|the hub]] ${i === 0 ? '[[nowhere]]' : ''} ${text(i, 10)}`,
      sections: [
        { title: word(), text: text(i, 20 + Math.floor(rand() * 20)), sections: [{ title: 'Details', text: text(i, 14) }] },
        { title: 'Details', text: text(i, 4 + Math.floor(rand() * 30)) },
      ],
    };
  });
}

interface Link {
  passage: number;
  document: number;
  target: number | null;
}
interface Stored {
  links: Link[];
  passages: Map<number, PairPassage>;
  titles: Map<number, string>;
}

async function stored(db: Database): Promise<Stored> {
  const links = await db.query<Link>('SELECT passage_id AS passage, document_id AS document, target_document_id AS target FROM links');
  const rows = await db.query<PairPassage>(
    `SELECT id AS "passageId", document_id AS "documentId", section_id AS "sectionId", title_path AS "titlePath", text FROM passages`,
  );
  const titles = await db.query<{ id: number; title: string }>('SELECT id, title FROM documents');
  return { links, passages: new Map(rows.map((r) => [r.passageId, r])), titles: new Map(titles.map((t) => [t.id, t.title])) };
}

const mentions = (l: Link) => l.target !== null && l.target !== l.document;

/** HLP's DL and CM pairs (Appendix E), keyed "q p", computed from the raw links. */
function expectedLinkPairs(s: Stored, hubFraction: number): { dualLink: Set<string>; coMention: Set<string> } {
  const resolved = s.links.filter(mentions);
  const linksTo = (passage: number, document: number) => resolved.some((l) => l.passage === passage && l.target === document);
  const dualLink = new Set<string>();
  for (const a of resolved) for (const b of resolved) if (b.document === a.target && b.target === a.document) dualLink.add(`${a.passage} ${b.passage}`);
  // in-degree: distinct linking documents; hubs: the top share h of link targets by in-degree
  const inDegree = new Map<number, Set<number>>();
  for (const l of resolved) inDegree.set(l.target!, (inDegree.get(l.target!) ?? new Set()).add(l.document));
  const degrees = [...inDegree.values()].map((d) => d.size).sort((a, b) => b - a);
  const hubs = Math.floor(hubFraction * degrees.length);
  // above the (h+1)-th largest in-degree: at most h hubs, ties at the cut are not
  const isHub = (e: number) => hubs >= 1 && inDegree.get(e)!.size > (degrees[hubs] ?? 0);
  const coMention = new Set<string>();
  for (const q of resolved) {
    const e = q.target!;
    if (isHub(e)) continue;
    for (const p of resolved) {
      if (p.target !== e || p.document === q.document || p.document === e) continue;
      if (linksTo(p.passage, q.document) && !linksTo(q.passage, p.document)) coMention.add(`${q.passage} ${p.passage}`);
    }
  }
  return { dualLink, coMention };
}

async function mine(db: Database, options: MineOptions): Promise<TrainingPair[]> {
  const pairs: TrainingPair[] = [];
  for await (const pair of minePairs(db, options)) pairs.push(pair);
  return pairs;
}

const keysOf = (pairs: TrainingPair[], kind: PairKind) =>
  new Set(pairs.filter((p) => p.kind === kind).map((p) => `${p.questionPassageId} ${p.positive.passageId}`));
const startsWith = (path: string[], prefix: string[]) => prefix.every((t, i) => path[i] === t);
const NONE = { bm25: 0, inDoc: 0, inSec: 0, documents: 0 };

const lexical = (question: string, mode: 'LEXICAL' | 'LEXICAL_DOCUMENTS'): VectorSearch => ({
  mode,
  documentModel: { id: 0, dimension: 1 },
  passageModel: { id: 0, dimension: 1 },
  questionText: question,
  k1: 1000,
  k2: 1000,
  lambda: 1,
  exact: true,
});

describe('training pairs', () => {
  let api: TestApi;
  let db: Database;
  let s: Stored;

  beforeAll(async () => {
    api = await createTestApi();
    db = api.testDb.db;
    const summary = await ingestDocuments(db, corpus(5), INGEST);
    expect(summary.failed).toBe(0);
    await indexLexical(db);
    s = await stored(db);
  });
  afterAll(() => api.close());

  it('mines exactly the dual-link and co-mention pairs of the paper, hubs filtered', async () => {
    const expected = expectedLinkPairs(s, 0.1);
    expect(expected.dualLink.size).toBeGreaterThan(3);
    expect(expected.coMention.size).toBeGreaterThan(3);
    const pairs = await mine(db, { kinds: ['dual-link', 'co-mention'], negatives: NONE });
    expect(keysOf(pairs, 'dual-link')).toEqual(expected.dualLink);
    expect(keysOf(pairs, 'co-mention')).toEqual(expected.coMention);
    // tiny pages: a question passage's pairs split across pages, batches without any pair
    const perQuestion = new Map<number, number>();
    for (const p of pairs) perQuestion.set(p.questionPassageId!, (perQuestion.get(p.questionPassageId!) ?? 0) + 1);
    expect(Math.max(...perQuestion.values())).toBeGreaterThan(2);
    const paged = await mine(db, { kinds: ['dual-link', 'co-mention'], negatives: NONE, pageSize: 2 });
    expect(paged.map((p) => `${p.kind} ${p.questionPassageId} ${p.positive.passageId}`)).toEqual(
      pairs.map((p) => `${p.kind} ${p.questionPassageId} ${p.positive.passageId}`),
    );
    // the hub filter acts: without it the hub is a co-mentioned third document too
    const unfiltered = expectedLinkPairs(s, 0);
    expect(unfiltered.coMention.size).toBeGreaterThan(expected.coMention.size);
    expect(keysOf(await mine(db, { kinds: ['co-mention'], negatives: NONE, hubFraction: 0 }), 'co-mention')).toEqual(unfiltered.coMention);
    for (const p of pairs) {
      const q = s.passages.get(p.questionPassageId!)!;
      expect(p.question).toBe(q.text.split(/\s+/).filter(Boolean).slice(0, 64).join(' '));
      expect(p.positive).toEqual(s.passages.get(p.positive.passageId));
      expect(p.positiveDocument).toEqual({ documentId: p.positive.documentId, title: s.titles.get(p.positive.documentId) });
    }
    // and the reverse of every dual-link pair is one too
    for (const key of expected.dualLink) expect(expected.dualLink.has(key.split(' ').reverse().join(' '))).toBe(true);
  });

  it('mines one title-tree pair per section and per abstract, the positive drawn from it', async () => {
    const pairs = await mine(db, { kinds: ['section-path', 'document-title'], negatives: NONE, seed: 3 });
    const sections = new Map<number, PairPassage[]>();
    const abstracts = new Map<number, PairPassage[]>();
    for (const p of s.passages.values()) {
      const groups = p.sectionId === null ? abstracts : sections;
      const key = p.sectionId ?? p.documentId;
      groups.set(key, [...(groups.get(key) ?? []), p]);
    }
    const bySection = pairs.filter((p) => p.kind === 'section-path');
    expect(bySection.map((p) => p.positive.sectionId).sort()).toEqual([...sections.keys()].sort());
    for (const p of bySection) {
      expect(sections.get(p.positive.sectionId!)!.map((x) => x.passageId)).toContain(p.positive.passageId);
      expect(p.question).toBe(p.positive.titlePath.join(' › '));
      expect(p.questionPassageId).toBeNull();
    }
    const byTitle = pairs.filter((p) => p.kind === 'document-title');
    expect(byTitle.map((p) => p.positive.documentId).sort()).toEqual([...abstracts.keys()].sort());
    expect(abstracts.size).toBe(N - 2); // d3 and d7 have no abstract
    for (const p of byTitle) {
      expect(p.positive.sectionId).toBeNull();
      expect(p.question).toBe(s.titles.get(p.positive.documentId));
    }
  });

  it('gives every pair negatives that obey their definitions', async () => {
    const pairs = await mine(db, { limit: 12, seed: 7 });
    expect(new Set(pairs.map((p) => p.kind))).toEqual(new Set(['dual-link', 'co-mention', 'section-path', 'document-title']));
    const dl = expectedLinkPairs(s, 0.1);
    let inSec = 0;
    for (const p of pairs) {
      // what answers the question as well as the positive does is never a negative
      const answers = (x: PairPassage): boolean => {
        if (x.passageId === p.positive.passageId || x.passageId === p.questionPassageId) return true;
        const set = p.kind === 'dual-link' ? dl.dualLink : dl.coMention;
        if (p.kind === 'dual-link' || p.kind === 'co-mention') return set.has(`${p.questionPassageId} ${x.passageId}`);
        if (p.kind === 'section-path') return x.documentId === p.positive.documentId && startsWith(x.titlePath, p.positive.titlePath);
        return x.documentId === p.positive.documentId && x.sectionId === null;
      };
      const all = [...p.negatives.bm25, ...p.negatives.inDoc, ...p.negatives.inSec];
      for (const x of all) {
        expect(x).toEqual(s.passages.get(x.passageId));
        expect(answers(x)).toBe(false);
      }
      for (const x of p.negatives.inDoc) expect(x.documentId).toBe(p.positive.documentId);
      for (const x of p.negatives.inSec) expect(x.sectionId).toBe(p.positive.sectionId);
      const inSecIds = new Set(p.negatives.inSec.map((x) => x.passageId));
      expect(p.negatives.inDoc.filter((x) => inSecIds.has(x.passageId))).toEqual([]);
      // as many as the definition allows, up to 4
      const sameDoc = [...s.passages.values()].filter((x) => x.documentId === p.positive.documentId && !answers(x));
      const sameSec = sameDoc.filter((x) => p.positive.sectionId !== null && x.sectionId === p.positive.sectionId);
      expect(p.negatives.inSec).toHaveLength(Math.min(4, sameSec.length));
      expect(p.negatives.inDoc).toHaveLength(Math.min(4, sameDoc.length - p.negatives.inSec.length));
      inSec += p.negatives.inSec.length;
      // BM25: the LEXICAL mode's ranking, minus what answers the question, first four
      const hits = (await search(db, lexical(p.question, 'LEXICAL'))).passages;
      const ranked = hits.map((h) => s.passages.get(h.passageId)!);
      const expected = ranked
        .filter((x) => !answers(x))
        .slice(0, 4)
        .map((x) => x.passageId);
      // Position by position the same BM25 score; passages tied to the last bits may swap, as the
      // bounded statement the miner runs sums a tie's terms in another order than the exact one.
      const score = new Map(hits.map((h) => [h.passageId, h.score]));
      const got = p.negatives.bm25.map((x) => x.passageId);
      expect(got).toHaveLength(expected.length);
      got.forEach((id, i) => expect(Math.abs(score.get(id)! - score.get(expected[i])!)).toBeLessThan(1e-9));
      expect(new Set(got).size).toBe(got.length);
      const documents = (await search(db, lexical(p.question, 'LEXICAL_DOCUMENTS'))).documents.map((d) => d.documentId);
      const questionDocument = p.questionPassageId ? s.passages.get(p.questionPassageId)!.documentId : null;
      expect(p.negatives.documents).toEqual(
        documents
          .filter((d) => d !== p.positive.documentId && d !== questionDocument)
          .slice(0, 4)
          .map((d) => ({ documentId: d, title: s.titles.get(d) })),
      );
    }
    expect(inSec).toBeGreaterThan(0);
  });

  it('is deterministic under a seed and samples differently under another', async () => {
    const lines = async (seed: number) => (await mine(db, { limit: 6, seed })).map((p) => JSON.stringify(p)).join('\n');
    const a = await lines(1);
    expect(await lines(1)).toBe(a);
    expect(await lines(2)).not.toBe(a);
    // the first pairs do not depend on how many follow
    const few = (await mine(db, { kinds: ['section-path'], limit: 3, seed: 1 })).map((p) => JSON.stringify(p));
    const more = (await mine(db, { kinds: ['section-path'], limit: 8, seed: 1 })).map((p) => JSON.stringify(p));
    expect(more.slice(0, 3)).toEqual(few);
  });

  it('reads candidates a bounded page at a time', async () => {
    const rows: number[] = [];
    const spy = new Proxy(db, {
      get(target, prop) {
        if (prop === 'query') {
          return async (sql: string, params?: unknown[]) => {
            const result = await target.query(sql, params);
            rows.push(result.length);
            return result;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Database;
    const pairs = await mine(spy, { pageSize: 3, negatives: { bm25: 2, inDoc: 2, inSec: 2, documents: 2 } });
    const largestDocument = Math.max(...[...s.titles.keys()].map((d) => [...s.passages.values()].filter((p) => p.documentId === d).length));
    // pages, a document's passage keys, BM25 candidates (k = negatives + 8, grown at most to 40 here)
    const bound = Math.max(3, largestDocument, 40);
    expect(s.passages.size).toBeGreaterThan(bound);
    expect(Math.max(...rows)).toBeLessThanOrEqual(bound);
    expect(pairs.length).toBeGreaterThan(3 * 4);
  });

  it('refuses too few pairs with a typed error naming why, before any pair', async () => {
    const bare = await createTestDatabase();
    try {
      await ingestDocuments(bare.db, [{ key: 'a', title: 'Alone', sections: [{ title: 'Only', text: 'one short passage' }] }], INGEST);
      const error = await mine(bare.db, { kinds: ['dual-link', 'co-mention'] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'kinds' });
      expect((error as Error).message).toMatch(/too few training pairs: 0 .*dual-link: no two passages.*0 resolved links/);
      const few = await mine(bare.db, { minPairs: 5 }).catch((e: unknown) => e);
      expect((few as Error).message).toMatch(/1 of kinds .* at least 5 needed.*document-title: no document has abstract passages.*feedback: no question/);
    } finally {
      await bare.drop();
    }
  });

  it('serves pairs to admins over GraphQL, bounded, the same as the miner', async () => {
    const query = `query($k: [TrainingPairKind!], $n: Int, $s: Int) { trainingPairs(kinds: $k, first: $n, seed: $s) {
      kind question questionPassageId positive { passageId documentId sectionId titlePath text } positiveDocument { documentId title }
      negatives { bm25 { passageId } inDoc { passageId } inSec { passageId } documents { documentId title } } } }`;
    const { trainingPairs } = dataOf(await api.exec(query, { k: ['SECTION_PATH', 'DUAL_LINK'], n: 5, s: 4 }));
    expect(trainingPairs).toHaveLength(5);
    const mined = await mine(db, { kinds: ['dual-link', 'section-path'], limit: 5, seed: 4 });
    expect(trainingPairs.map((p: { kind: string }) => p.kind)).toEqual(mined.slice(0, 5).map((p) => p.kind.replace('-', '_').toUpperCase()));
    expect(trainingPairs[0].positive.passageId).toBe(String(mined[0].positive.passageId));
    expect(trainingPairs[0].negatives.bm25.map((x: { passageId: string }) => Number(x.passageId))).toEqual(mined[0].negatives.bm25.map((x) => x.passageId));
    // the most a query may ask for passes the cost limit; kinds that give nothing are refused, naming why
    const sections = [...new Set([...s.passages.values()].map((p) => p.sectionId).filter((id) => id !== null))].length;
    expect(dataOf(await api.exec(query, { k: ['SECTION_PATH'], n: 100 })).trainingPairs).toHaveLength(Math.min(100, sections));
    const none = await api.exec(query, { k: ['FEEDBACK'], n: 3 });
    expect(none.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/feedback: no question has a passage judged relevant/),
      extensions: { code: 'BAD_USER_INPUT', argument: 'kinds' },
    });
    const tooMany = await api.exec(query, { n: 101 });
    expect(tooMany.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    const anonymous = await api.execAs(null, query, { n: 1 });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('dhr pairs', () => {
  let work: string;
  let store: Awaited<ReturnType<typeof cliStore>>;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'dhr-pairs-'));
    store = await cliStore(work);
  });
  afterAll(async () => {
    await store.drop();
    await rm(work, { recursive: true, force: true });
  });

  it('writes JSONL whose lines parse, counts per kind, and refuses too few pairs', async () => {
    const docs = join(work, 'docs.json');
    await writeFile(docs, JSON.stringify(corpus(5)));
    expect((await dhr(['ingest', docs, '--no-embed'], { ...store.env, MAX_WORDS: '12' })).code).toBe(0);
    const out = join(work, 'pairs.jsonl');
    const run = await dhr(['pairs', '--out', out, '--limit', '5', '--seed', '9', '--negatives', '2'], store.env);
    expect(run.stderr).toMatch(/pairs: 20 written to .*\(dual-link 5, co-mention 5, section-path 5, document-title 5, feedback 0\)/);
    const lines = (await readFile(out, 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(20);
    for (const line of lines) {
      const pair = JSON.parse(line) as TrainingPair;
      expect(Object.keys(pair)).toEqual(['kind', 'question', 'questionPassageId', 'positive', 'positiveDocument', 'negatives']);
      expect(pair.negatives.bm25.length).toBeLessThanOrEqual(2);
    }
    // to stdout; five pairs are fewer than the default minimum of ten
    const stdout = await dhr(['pairs', '--kinds', 'section-path', '--limit', '5', '--seed', '9', '--negatives', '2', '--min-pairs', '5'], store.env);
    expect(stdout.stdout.trimEnd().split('\n')).toEqual(lines.slice(10, 15));

    const refused = await dhr(['pairs', '--out', join(work, 'none.jsonl'), '--kinds', 'feedback'], store.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/pairs: too few training pairs: 0 of kinds feedback, at least 10 needed; feedback: no question/);
    await expect(readFile(join(work, 'none.jsonl'))).rejects.toThrow(/ENOENT/);
    const unwritable = await dhr(['pairs', '--out', join(work, 'no', 'such', 'dir.jsonl'), '--min-pairs', '1'], store.env);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/pairs: cannot write .*dir\.jsonl: ENOENT/);
    const badKind = await dhr(['pairs', '--kinds', 'dual-link,nonsense'], store.env);
    expect(badKind.code).not.toBe(0);
    expect(badKind.stderr).toMatch(/--kinds.*must be a comma-separated list/);
  }, 240_000);
});
