import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import {
  APPROXIMATE_TOKENIZER,
  assembleContext,
  BLOCK_SEPARATOR,
  buildBlocks,
  CONTEXT_EXPANSIONS,
  contextTokenizer,
  validateContextOptions,
  type AssembledContext,
  type ContextHit,
  type ContextOptions,
  type ResolvedContextOptions,
} from '../src/pipeline/context';
import type { ContextPassage } from '../src/store/context-passages';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { prng } from './helpers/prng';
import { writeTinyModel } from './helpers/tiny-model';

/**
 * Context assembly against a brute force written here: every passage checked against every hit
 * for whether a block holds it, runs cut wherever a passage of the section lies between, then the
 * greedy fill in rank order. Random title trees, ranks and budgets; the pure assembly, the store's
 * read (PGlite or PostgreSQL, DATABASE_URL) and Retrieval.context must all agree with it.
 */

const WORDS = ['harbour', 'ferry', 'island', 'cod', 'herring', 'bridge', 'tunnel', 'mountain', 'fjord', 'glacier', 'rain', 'snow'];

type Random = () => number;
const pick = <T>(rand: Random, list: readonly T[]) => list[Math.floor(rand() * list.length)];
const sentence = (rand: Random) => Array.from({ length: 3 + Math.floor(rand() * 25) }, () => pick(rand, WORDS)).join(' ');

/** The brute force: no grouping, no sorting tricks; quadratic on purpose. */
function bruteForce(hits: readonly ContextHit[], all: readonly ContextPassage[], o: ResolvedContextOptions, count: (t: string) => number) {
  const rank = (id: number) => {
    const i = hits.findIndex((h) => h.passageId === id);
    return i < 0 ? undefined : i;
  };
  const sameSection = (a: ContextPassage, b: ContextPassage) => a.documentId === b.documentId && a.sectionId === b.sectionId;
  const sectionOf = (p: ContextPassage) => all.filter((q) => sameSection(p, q)).sort((a, b) => a.ordinal - b.ordinal);
  const index = (p: ContextPassage) => sectionOf(p).findIndex((q) => q.id === p.id);
  const holds = (p: ContextPassage) => {
    const section = sectionOf(p);
    const sectionHits = section.filter((q) => rank(q.id) !== undefined);
    if (sectionHits.length === 0) return false;
    if (sectionHits.length / section.length >= o.mergeRatio) return true;
    if (o.expand === 'SECTION' && count(section.map((q) => q.text).join(BLOCK_SEPARATOR)) <= o.sectionTokens) return true;
    const reach = o.expand === 'WINDOW' ? o.window : 0;
    return sectionHits.some((h) => Math.abs(index(h) - index(p)) <= reach);
  };
  const held = all.filter(holds).sort((a, b) => a.documentId - b.documentId || (a.sectionId ?? -1) - (b.sectionId ?? -1) || a.ordinal - b.ordinal);
  const runs: ContextPassage[][] = [];
  for (const p of held) {
    const last = runs.at(-1)?.at(-1);
    const between = last && sameSection(last, p) && all.some((q) => sameSection(q, p) && q.ordinal > last.ordinal && q.ordinal < p.ordinal);
    if (last && sameSection(last, p) && !between) runs.at(-1)!.push(p);
    else runs.push([p]);
  }
  const candidates = runs
    .map((run) => {
      const best = Math.min(...run.map((p) => rank(p.id) ?? Infinity));
      const text = run.map((p) => p.text).join(BLOCK_SEPARATOR);
      return { run, best, text, tokens: count(text), hits: run.filter((p) => rank(p.id) !== undefined).length };
    })
    .sort((a, b) => a.best - b.best);
  let left = o.tokens;
  let truncated = 0;
  const blocks = [];
  for (const c of candidates) {
    if (c.tokens <= left) {
      left -= c.tokens;
      blocks.push({
        passageIds: c.run.map((p) => p.id),
        rank: c.best + 1,
        score: hits[c.best].score,
        text: c.text,
        tokens: c.tokens,
        documentId: c.run[0].documentId,
        sectionId: c.run[0].sectionId,
      });
    } else truncated += c.hits;
  }
  return { blocks, truncated, refused: candidates.length > 0 && blocks.length === 0 };
}

function randomOptions(rand: Random): ContextOptions {
  const expand = pick(rand, CONTEXT_EXPANSIONS);
  return {
    tokens: 1 + Math.floor(rand() * 400),
    expand,
    window: expand === 'WINDOW' ? Math.floor(rand() * 4) : undefined,
    sectionTokens: expand === 'SECTION' ? 1 + Math.floor(rand() * 300) : undefined,
    mergeRatio: pick(rand, [0.25, 0.5, 0.75, 1]),
  };
}

function randomHits(rand: Random, all: readonly ContextPassage[]): ContextHit[] {
  const chosen = all.filter(() => rand() < 0.3).sort(() => rand() - 0.5);
  return chosen.map((p, i) => ({ passageId: p.id, documentId: p.documentId, score: 10 - i * 0.1 }));
}

/** What assembly must give, or that it must refuse, per the brute force. */
function expectAgrees(got: () => AssembledContext, hits: ContextHit[], all: ContextPassage[], options: ContextOptions) {
  const o = validateContextOptions(options);
  const want = bruteForce(hits, all, o, APPROXIMATE_TOKENIZER.count);
  if (want.refused) {
    expect(got).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', argument: 'tokens' }));
    return;
  }
  const c = got();
  expect(c.blocks.map(({ titlePath: _, ...b }) => b)).toEqual(want.blocks);
  expect(c.truncated).toBe(want.truncated);
  expect(c.tokens).toBe(want.blocks.reduce((s, b) => s + b.tokens, 0));
  expect(c.tokens).toBeLessThanOrEqual(o.tokens);
  const ids = c.blocks.flatMap((b) => b.passageIds);
  expect(new Set(ids).size).toBe(ids.length);
}

describe('context blocks against brute force (pure)', () => {
  /** A synthetic store: documents of sections of 0–6 passages, ordinals in reading order, some text before the first heading. */
  function randomStore(rand: Random): ContextPassage[] {
    const all: ContextPassage[] = [];
    let id = 1;
    let sectionId = 1;
    for (let d = 1; d <= 3; d++) {
      let ordinal = 0;
      const sections = [null, ...Array.from({ length: 1 + Math.floor(rand() * 4) }, () => sectionId++)];
      for (const s of sections) {
        const n = Math.floor(rand() * 7);
        for (let i = 0; i < n; i++) all.push({ id: id++, documentId: d, sectionId: s, ordinal: ordinal++, text: sentence(rand), titlePath: [`doc ${d}`] });
      }
    }
    return all.sort(() => rand() - 0.5);
  }

  it('agrees on 400 random trees, ranks, budgets and options', () => {
    const rand = prng(53);
    for (let t = 0; t < 400; t++) {
      const all = randomStore(rand);
      const hits = randomHits(rand, all);
      const options = randomOptions(rand);
      const o = validateContextOptions(options);
      expectAgrees(() => buildBlocks(hits, all, o, APPROXIMATE_TOKENIZER), hits, all, options);
    }
  });

  it('merges adjacent hits, expands a window within the section only, and takes a section whole at the ratio', () => {
    const p = (id: number, sectionId: number | null, ordinal: number): ContextPassage => ({
      id,
      documentId: 1,
      sectionId,
      ordinal,
      text: `p${id} text`,
      titlePath: ['T'],
    });
    const all = [p(1, null, 0), p(2, 10, 1), p(3, 10, 2), p(4, 10, 3), p(5, 10, 4), p(6, 11, 5), p(7, 11, 6)];
    const hits = (...ids: number[]) => ids.map((id, i) => ({ passageId: id, documentId: 1, score: 1 - i / 10 }));
    const run = (h: ContextHit[], o: ContextOptions) => buildBlocks(h, all, validateContextOptions(o), APPROXIMATE_TOKENIZER).blocks.map((b) => b.passageIds);
    expect(run(hits(3, 2), { tokens: 100, mergeRatio: 1 })).toEqual([[2, 3]]);
    expect(run(hits(5, 2), { tokens: 100, mergeRatio: 1 })).toEqual([[5], [2]]);
    // the window stops at the section's ends: never into section 11 or the text before the headings
    expect(run(hits(5, 2), { tokens: 100, expand: 'WINDOW', window: 1, mergeRatio: 1 })).toEqual([[2, 3, 4, 5]]);
    expect(run(hits(6), { tokens: 100, expand: 'WINDOW', window: 20, mergeRatio: 1 })).toEqual([[6, 7]]);
    expect(run(hits(4, 2), { tokens: 100, mergeRatio: 0.5 })).toEqual([[2, 3, 4, 5]]);
    expect(run(hits(3), { tokens: 100, expand: 'SECTION', mergeRatio: 1 })).toEqual([[2, 3, 4, 5]]);
    expect(run(hits(3), { tokens: 100, expand: 'SECTION', sectionTokens: 5, mergeRatio: 1 })).toEqual([[3]]);
    // a block that does not fit is left out whole; a later smaller one still fits
    const c = buildBlocks(hits(3, 7), all, validateContextOptions({ tokens: 5, expand: 'WINDOW', window: 1, mergeRatio: 1 }), APPROXIMATE_TOKENIZER);
    expect(c.blocks.map((b) => b.passageIds)).toEqual([[6, 7]]);
    expect(c.truncated).toBe(1);
  });

  it('refuses out-of-range options naming the argument', () => {
    const bad: [ContextOptions, string][] = [
      [{ tokens: 0 }, 'tokens'],
      [{ tokens: -5 }, 'tokens'],
      [{ tokens: 1.5 }, 'tokens'],
      [{ tokens: 100, expand: 'WINDOW', window: 21 }, 'window'],
      [{ tokens: 100, expand: 'WINDOW', window: -1 }, 'window'],
      [{ tokens: 100, window: 2 }, 'window'],
      [{ tokens: 100, sectionTokens: 10 }, 'sectionTokens'],
      [{ tokens: 100, mergeRatio: 0 }, 'mergeRatio'],
      [{ tokens: 100, mergeRatio: 1.5 }, 'mergeRatio'],
      [{ tokens: 100, expand: 'ALL' as never }, 'expand'],
    ];
    for (const [options, argument] of bad) expect(() => validateContextOptions(options)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT', argument }));
  });

  it("counts with the passage encoder's tokenizer, less what it adds to every text", async () => {
    const root = await mkdtemp(join(tmpdir(), 'dhr-context-'));
    try {
      const encoder = await TransformerEncoder.load(await writeTinyModel(root, 'tiny-context'));
      const tokenizer = contextTokenizer(encoder);
      expect(tokenizer.name).toBe('tiny-context');
      const text = 'the harbour of oslo';
      expect(tokenizer.count(text)).toBe(encoder.countTokens(text, 'passage') - encoder.countTokens('', 'passage'));
      expect(tokenizer.count(text)).toBeGreaterThan(0);
      await encoder.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    expect(contextTokenizer(undefined)).toBe(APPROXIMATE_TOKENIZER);
  });
});

describe('context blocks on the store and through retrieve', () => {
  let api: TestApi;
  let all: ContextPassage[];
  const rand = prng(7);

  beforeAll(async () => {
    api = await createTestApi();
    // Client passages, so the tree is exactly what the test built: sections nested two deep.
    const section = (depth: number): unknown => ({
      title: `${pick(rand, WORDS)} ${depth}`,
      passages: Array.from({ length: Math.floor(rand() * 6) }, () => ({ text: sentence(rand) })),
      sections: depth < 2 ? Array.from({ length: Math.floor(rand() * 3) }, () => section(depth + 1)) : [],
    });
    const docs = Array.from({ length: 4 }, (_, d) => ({
      key: `doc-${d}`,
      title: `Document ${d}`,
      passages: Array.from({ length: Math.floor(rand() * 3) }, () => ({ text: sentence(rand) })),
      sections: Array.from({ length: 2 + Math.floor(rand() * 2) }, () => section(1)),
    }));
    const r = dataOf(await api.exec(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created failed } }`, { d: docs }));
    expect(r.ingestDocuments).toEqual({ created: 4, failed: 0 });
    all = await api.testDb.db.query<ContextPassage>(
      `SELECT id, document_id AS "documentId", section_id AS "sectionId", ordinal, text, title_path AS "titlePath" FROM passages`,
    );
  });
  afterAll(() => api?.close());

  it('assembleContext reads the sections and agrees with brute force', async () => {
    for (let t = 0; t < 40; t++) {
      const hits = randomHits(rand, all);
      const options = randomOptions(rand);
      let got: AssembledContext | Error;
      try {
        got = await assembleContext(api.testDb.db, hits, options, APPROXIMATE_TOKENIZER);
      } catch (e) {
        got = e as Error;
      }
      expectAgrees(
        () => {
          if (got instanceof Error) throw got;
          return got;
        },
        hits,
        all,
        options,
      );
    }
  });

  const QUERY = `query($q: String!, $t: Int!, $e: ContextExpand, $w: Int, $r: Float) {
    retrieve(question: $q, mode: LEXICAL, k2: 20) {
      passages { passage { databaseId documentId: document { databaseId } } score }
      context(tokens: $t, expand: $e, window: $w, mergeRatio: $r) {
        blocks { titlePath text passageIds documentId sectionId score rank tokens } tokens budget truncated tokenizer
      }
    }
  }`;

  it('Retrieval.context is the brute force over the ranked passages, with global ids and title paths', async () => {
    for (const [expand, window] of [
      ['NONE', undefined],
      ['WINDOW', 2],
      ['SECTION', undefined],
    ] as const) {
      const r = dataOf(await api.exec(QUERY, { q: 'harbour ferry fjord', t: 300, e: expand, w: window, r: 0.75 })).retrieve;
      const hits = r.passages.map((p: any) => ({ passageId: p.passage.databaseId, documentId: p.passage.documentId.databaseId, score: p.score }));
      expect(hits.length).toBeGreaterThan(3);
      const want = bruteForce(hits, all, validateContextOptions({ tokens: 300, expand, window, mergeRatio: 0.75 }), APPROXIMATE_TOKENIZER.count);
      const c = r.context;
      expect(c.tokenizer).toBe(APPROXIMATE_TOKENIZER.name);
      expect(c.budget).toBe(300);
      expect(c.truncated).toBe(want.truncated);
      expect(c.blocks.map((b: any) => b.text)).toEqual(want.blocks.map((b) => b.text));
      expect(c.blocks.map((b: any) => b.rank)).toEqual(want.blocks.map((b) => b.rank));
      const first = c.blocks[0];
      const passage = all.find((p) => p.id === want.blocks[0].passageIds[0])!;
      expect(first.titlePath).toEqual(passage.titlePath);
      const node = dataOf(
        await api.exec(`query($id: ID!) { node(id: $id) { ... on Passage { databaseId section { id } document { id } } } }`, { id: first.passageIds[0] }),
      ).node;
      expect(node.databaseId).toBe(passage.id);
      expect(first.documentId).toBe(node.document.id);
      expect(first.sectionId).toBe(node.section?.id ?? null);
    }
  });

  it('refuses a bad budget or window with BAD_USER_INPUT naming it, and no half answer', async () => {
    for (const [vars, argument] of [
      [{ t: 0 }, 'tokens'],
      [{ t: -10 }, 'tokens'],
      [{ t: 1 }, 'tokens'],
      [{ t: 300, e: 'WINDOW', w: 1000 }, 'window'],
      [{ t: 300, w: 2 }, 'window'],
    ] as const) {
      const r = await api.exec(QUERY, { q: 'harbour ferry fjord', ...vars });
      expect(r.data).toBeNull();
      expect(r.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
      expect(r.errors?.[0].message).toMatch(argument);
    }
  });
});
