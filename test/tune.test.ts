import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EncoderSet } from '../src/encoders/set';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingest } from '../src/pipeline/ingest';
import {
  chooseBudget,
  chooseSettings,
  kindMargins,
  kindsAgainst,
  lowersDense,
  MIN_GAIN,
  MIN_KIND_QUESTIONS,
  pairedDifference,
  type Scored,
} from '../src/tuning/choose';
import { BUDGET_FROM_PASSAGES, budgetLadder, budgetPlan, roundBudget, searchBudget } from '../src/tuning/budget';
import { applyChoice, changedValues } from '../src/tuning/runs';
import type { PointScore } from '../src/tuning/score';
import { TUNE_GRID, type TuneReport } from '../src/tuning/tune';
import { corpusSettingsOf } from '../src/retrieval/settings';
import { currentSettings } from '../src/store/retrieval-settings';
import { pseudoQuestions, type PseudoQuestion } from '../src/tuning/pseudo-questions';
import { retrieve } from '../src/retrieval/retrieve';
import { exclusively } from '../src/store/exclusive';
import { resolveRanking, type Ranking } from '../src/retrieval/parameters';
import { MODES } from '../src/retrieval/modes';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { dhr, useCliStore } from './helpers/cli';
import { createTestDatabase, type TestDatabase } from './helpers/database';
import { RIVER_DOCS } from './helpers/river-corpus';

/**
 * `dhr tune` chooses a corpus's ranking parameters from questions the corpus asks of
 * itself. The chooser's rules on scores made here; the pseudo-questions against the stored tree;
 * the command end to end (real processes, the real default model).
 */

const DOCS = RIVER_DOCS;

const scored = (label: string, rr: number[]): Scored => ({
  label,
  values: resolveRanking(MODES.HYBRID_HIERARCHICAL.defaults, {}).values,
  mrr: rr.reduce((a, b) => a + b, 0) / rr.length,
  reciprocalRanks: rr,
});

describe('chooseSettings', () => {
  const current = scored(
    'current',
    Array.from({ length: 40 }, (_, i) => (i % 2 ? 0.5 : 0.25)),
  );
  const lexical = scored(
    'lexical',
    Array.from({ length: 40 }, () => 0.2),
  );

  it('takes a point clearly better on the same questions', () => {
    const better = scored(
      'better',
      current.reciprocalRanks.map((r, i) => (i % 4 === 0 ? 1 : r + 0.05)),
    );
    const c = chooseSettings({ current, defaults: current, lexical, grid: [current, better] });
    expect(c.change).toBe(true);
    expect(c.chosen.label).toBe('better');
    expect(c.margin).toBeCloseTo(better.mrr - current.mrr, 12);
  });

  it('keeps the settings in force when the gain is small, or within two standard errors, or the best is below LEXICAL', () => {
    const small = scored(
      'small',
      current.reciprocalRanks.map((r) => r + MIN_GAIN / 2),
    );
    expect(chooseSettings({ current, defaults: current, lexical, grid: [small] })).toMatchObject({ change: false, chosen: current });
    // A large mean gain carried by two questions out of forty: noisy.
    const noisy = scored(
      'noisy',
      current.reciprocalRanks.map((r, i) => (i < 2 ? 1 : i < 6 ? 0 : r)),
    );
    const n = chooseSettings({ current, defaults: current, lexical, grid: [noisy] });
    const { mean, standardError } = pairedDifference(noisy.reciprocalRanks, current.reciprocalRanks);
    expect(mean).toBeLessThan(2 * standardError);
    expect(n.change).toBe(false);
    expect(n.reason).toMatch(/standard errors|under the/);
    const strongLexical = scored(
      'lexical',
      Array.from({ length: 40 }, () => 0.9),
    );
    const better = scored(
      'better',
      current.reciprocalRanks.map((r) => r + 0.1),
    );
    const below = chooseSettings({ current, defaults: current, lexical: strongLexical, grid: [better] });
    expect(below.change).toBe(false);
    expect(below.reason).toMatch(/below LEXICAL/);
  });

  it('keeps the settings in force when one source of questions loses what another gains, and lets a source too small have no say', () => {
    // Forty questions of two kinds: the first twenty gain a lot, the last twenty lose a little.
    const kinds = current.reciprocalRanks.map((_, i) => (i < 20 ? 'section-path' : 'cloze'));
    const split = scored(
      'split',
      current.reciprocalRanks.map((r, i) => (i < 20 ? Math.min(1, r + 0.4) : r - 0.05)),
    );
    const overall = pairedDifference(split.reciprocalRanks, current.reciprocalRanks);
    // Without the kinds it would change: clearly better in all.
    expect(overall.mean).toBeGreaterThan(Math.max(MIN_GAIN, 2 * overall.standardError));
    expect(chooseSettings({ current, defaults: current, lexical, grid: [split] }).change).toBe(true);
    expect(kindsAgainst(split.reciprocalRanks, current.reciprocalRanks, kinds)).toEqual([{ kind: 'cloze', margin: expect.closeTo(-0.05, 12), questions: 20 }]);
    // A smaller gain that no source loses does not stand in for it: the sources disagree on the direction.
    const even = scored(
      'even',
      current.reciprocalRanks.map((r) => r + 0.05),
    );
    const c = chooseSettings({ current, defaults: current, lexical, grid: [split, even, current], kinds });
    expect(c).toMatchObject({ change: false, chosen: current });
    expect(c.reason).toMatch(/split.*loses on cloze -0\.050 over 20 questions/);
    expect(chooseSettings({ current, defaults: current, lexical, grid: [even, current], kinds })).toMatchObject({ change: true, chosen: even });
    // The same loss on fewer than MIN_KIND_QUESTIONS questions has no say of its own.
    const few = current.reciprocalRanks.map((_, i) => (i < 40 - (MIN_KIND_QUESTIONS - 1) ? 'section-path' : 'cloze'));
    const small = scored(
      'small-loss',
      current.reciprocalRanks.map((r, i) => (few[i] === 'section-path' ? Math.min(1, r + 0.4) : r - 0.05)),
    );
    expect(chooseSettings({ current, defaults: current, lexical, grid: [small], kinds: few })).toMatchObject({ change: true, chosen: small });
  });

  it('keeps the settings in force when one source of questions carries the whole gain and the others do not move', () => {
    const kinds = current.reciprocalRanks.map((_, i) => (i < 20 ? 'cloze' : 'section-path'));
    // Twenty cloze questions gain a lot; the twenty section paths gain under MIN_GAIN.
    const alone = scored(
      'alone',
      current.reciprocalRanks.map((r, i) => (i < 20 ? Math.min(1, r + 0.4) : r + MIN_GAIN / 2)),
    );
    const overall = pairedDifference(alone.reciprocalRanks, current.reciprocalRanks);
    expect(overall.mean).toBeGreaterThan(Math.max(MIN_GAIN, 2 * overall.standardError));
    expect(kindsAgainst(alone.reciprocalRanks, current.reciprocalRanks, kinds)).toEqual([]);
    expect(kindMargins(alone.reciprocalRanks, current.reciprocalRanks, kinds)).toEqual([
      { kind: 'cloze', margin: expect.any(Number), questions: 20 },
      { kind: 'section-path', margin: expect.closeTo(MIN_GAIN / 2, 12), questions: 20 },
    ]);
    const c = chooseSettings({ current, defaults: current, lexical, grid: [alone, current], kinds });
    expect(c).toMatchObject({ change: false, chosen: current });
    expect(c.reason).toMatch(/carried by cloze alone \(cloze \+0\.[0-9]+, section-path \+0\.005\): a change needs 2 sources/);
    // The same gain with a second source behind it is taken.
    const both = scored(
      'both',
      alone.reciprocalRanks.map((r, i) => (i >= 20 ? r + 0.05 : r)),
    );
    expect(chooseSettings({ current, defaults: current, lexical, grid: [both, current], kinds })).toMatchObject({ change: true, chosen: both });
    // With only one source that has a say, that one may carry a change alone.
    const one = current.reciprocalRanks.map((_, i) => (i < 21 ? 'cloze' : 'title'));
    const lone = scored(
      'lone',
      current.reciprocalRanks.map((r, i) => (i < 21 ? Math.min(1, r + 0.4) : r)),
    );
    expect(chooseSettings({ current, defaults: current, lexical, grid: [lone, current], kinds: one })).toMatchObject({ change: true, chosen: lone });
  });

  it('never lowers a dense weight (alpha, documentAlpha), however much the pseudo-questions gain by it, and still raises one', () => {
    const at = (label: string, values: Partial<Ranking>, gain: number): Scored => ({
      ...scored(
        label,
        current.reciprocalRanks.map((r) => Math.min(1, r + gain)),
      ),
      values: { ...current.values, ...values },
    });
    const { alpha, documentAlpha } = current.values;
    const lexicalSide = at('alpha down', { alpha: alpha - 0.2 }, 0.3);
    const documentSide = at('documentAlpha down', { documentAlpha: documentAlpha - 0.3 }, 0.25);
    const denseSide = at('alpha up', { alpha: alpha + 0.2 }, 0.1);
    expect(lowersDense(lexicalSide.values, current.values)).toEqual(['alpha']);
    expect(lowersDense(documentSide.values, current.values)).toEqual(['documentAlpha']);
    expect(lowersDense(denseSide.values, current.values)).toEqual([]);
    const c = chooseSettings({ current, defaults: current, lexical, grid: [lexicalSide, documentSide, denseSide, current] });
    expect(c).toMatchObject({ change: true, chosen: denseSide });
    expect(c.reason).toMatch(/; passed over: alpha down \(MRR [0-9.]+\), which lowers alpha, a move pseudo-questions cannot judge$/);
    // With only points on the lexical side, the settings in force stay.
    const kept = chooseSettings({ current, defaults: current, lexical, grid: [lexicalSide, documentSide] });
    expect(kept).toMatchObject({ change: false, chosen: current });
    expect(kept.reason).toMatch(/lowers alpha/);
  });
});

describe('chooseBudget', () => {
  // Ten questions: which ones find their gold within the depth.
  const found = (...missing: number[]) => Array.from({ length: 10 }, (_, i) => !missing.includes(i));
  const point = (passageBudget: number | null, f: boolean[], mrr: number) => ({ values: { passageBudget }, found: f, mrr });
  const none = point(null, found(9), 0.5);

  it('takes the smallest budget that loses no question and no MRR against none, whatever order they come in', () => {
    const tried = [
      point(4000, found(9), 0.52),
      // as many found as none, but question 3 lost (and 9 gained): a loss
      point(500, found(3), 0.6),
      point(2000, found(9), 0.5 - MIN_GAIN / 2),
      point(1000, found(9), 0.5 - 2 * MIN_GAIN),
    ];
    const c = chooseBudget(none, tried, { k2: 20, depth: 100 });
    // 500 loses question 3, 1000 loses MRR: 2000, though 4000 and 500 score higher MRR.
    expect(c.chosen).toBe(2000);
    expect(c.reason).toMatch(
      /^passageBudget 2000, the smallest of 500, 1000, 2000, 4000 that loses nothing against none: no question's gold lost at 100 \(found 90\.0 %, none 90\.0 %\)/,
    );
  });

  it('chooses none when every budget loses', () => {
    const c = chooseBudget(none, [point(1000, found(8, 9), 0.6), point(2000, found(9), 0.3)], { k2: 20, depth: 100 });
    expect(c).toMatchObject({
      chosen: null,
      reason: expect.stringMatching(
        /every budget tried loses a question's gold at 100 or MRR@20 against none .*1000: 1 lost, MRR 0\.600; 2000: 0 lost, MRR 0\.300\): none$/,
      ),
    });
  });

  it('tries fractions of stage 2, rounded to two significant digits, each below it', () => {
    expect(budgetLadder(16_200)).toEqual([1000, 2000, 4100, 8100]);
    expect(budgetLadder(120)).toEqual([8, 15, 30, 60]);
    expect(budgetLadder(3)).toEqual([1, 2]);
    expect([roundBudget(7949), roundBudget(0.2), roundBudget(12_345)]).toEqual([7900, 1, 12_000]);
  });
});

describe('pseudo-questions', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await ingest(t.db, DOCS, DEFAULT_INGEST_OPTIONS);
  }, 120_000);
  afterAll(async () => t?.drop());

  it('draws section-path, document-title and cloze questions from a corpus without links, the same for the same seed', async () => {
    const a = await pseudoQuestions(t.db, { perKind: 10, seed: 7 });
    expect(a.counts).toMatchObject({ 'dual-link': 0, 'co-mention': 0, 'section-path': 10, 'document-title': 10, cloze: 10 });
    const b = await pseudoQuestions(t.db, { perKind: 10, seed: 7 });
    expect(b.questions.map((q) => q.question)).toEqual(a.questions.map((q) => q.question));
    const c = await pseudoQuestions(t.db, { perKind: 10, seed: 8 });
    expect(c.questions.map((q) => q.question)).not.toEqual(a.questions.map((q) => q.question));
  });

  it('asks a cloze question with a sentence of its passage, leaves that passage out and takes its section’s other passages as the gold', async () => {
    const { questions } = await pseudoQuestions(t.db, { perKind: 12, seed: 1, kinds: ['cloze'] });
    expect(questions.length).toBeGreaterThan(0);
    const rows = await t.db.query<{ id: number; document_id: number; section_id: number | null; text: string; title_path: string[] }>(
      'SELECT id, document_id, section_id, text, title_path FROM passages',
    );
    for (const q of questions) {
      expect(q.excluded).toHaveLength(1);
      const own = rows.find((r) => r.id === q.excluded[0])!;
      expect(own.text).toContain(q.question);
      for (const r of rows) {
        const key = { passageId: r.id, documentId: r.document_id, sectionId: r.section_id, titlePath: r.title_path };
        const neighbour = r.id !== own.id && r.document_id === own.document_id && r.section_id === own.section_id;
        expect(q.answers(key)).toBe(neighbour);
      }
    }
  });

  it('stores a budget the search chose on its own, while the weights stay; and nothing when the budget in force stays', async () => {
    const values = resolveRanking(MODES.HYBRID_HIERARCHICAL.defaults, {}).values;
    const at = (passageBudget: number | null, recall: number) =>
      ({
        label: `passageBudget ${passageBudget}`,
        mode: 'HYBRID_HIERARCHICAL',
        values: { ...values, passageBudget },
        mrr: 0.5,
        top1: 0.3,
        top20: 0.8,
        recall,
        reciprocalRanks: [],
        found: [],
        byKind: {},
      }) as PointScore;
    const current = at(null, 0.9);
    const report = (chosen: number | null): TuneReport => ({
      mode: 'HYBRID_HIERARCHICAL',
      questions: { 'dual-link': 0, 'co-mention': 0, 'section-path': 40, 'document-title': 40, cloze: 40, feedback: 0, labelled: 0 },
      current,
      defaults: current,
      lexical: current,
      hybrid: current,
      grid: [current],
      choice: { change: false, chosen: current, margin: 0, standardError: 0.01, reason: 'kept' },
      passageBudget: { stage2Passages: 16_000, points: [current, at(1000, 0.85), at(2000, 0.9)], chosen, reason: `budget ${chosen}` },
      seconds: 1,
      pointsRun: 7,
    });
    expect(changedValues(report(null))).toEqual({});
    expect(await applyChoice(t.db, report(null), 0)).toBeNull();
    expect(changedValues(report(2000))).toEqual({ passageBudget: 2000 });
    const version = await applyChoice(t.db, report(2000), 0);
    expect(version).not.toBeNull();
    const stored = await currentSettings(t.db);
    expect(stored).toMatchObject({ version, setBy: 'tune', note: 'budget 2000' });
    expect(corpusSettingsOf(stored).HYBRID_HIERARCHICAL).toEqual({ passageBudget: 2000 });
    expect((stored!.evidence as { passageBudget: { chosen: number; points: unknown[] } }).passageBudget).toMatchObject({
      chosen: 2000,
      stage2Passages: 16_000,
    });
  });
});

describe('dhr tune', () => {
  const store = useCliStore('dhr-tune-');

  it('refuses an empty store, a mode without weights and an unembedded store, saying why', async () => {
    const empty = await dhr(['tune'], store.env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/tune: the store holds no passages/);
    const lexical = await dhr(['tune', '--mode', 'LEXICAL'], store.env);
    expect(lexical.code).toBe(1);
    expect(lexical.stderr).toMatch(/mode LEXICAL has no weights to tune/);
    writeFileSync(join(store.work, 'one.json'), JSON.stringify(DOCS[0]));
    expect((await dhr(['ingest', join(store.work, 'one.json'), '--no-embed'], store.env)).code).toBe(0);
    const unembedded = await dhr(['tune'], store.env);
    expect(unembedded.code).toBe(1);
    expect(unembedded.stderr).toMatch(/tune: no passage has a vector of use-lite yet: embed the corpus/);
  });

  it('prints the grid beside the settings in force and the baselines, and with --apply stores what it chose, with its evidence', async () => {
    writeFileSync(join(store.work, 'rivers.json'), JSON.stringify(DOCS));
    expect((await dhr(['ingest', join(store.work, 'rivers.json')], store.env)).code).toBe(0);
    const dry = await dhr(['tune', '--per-kind', '12'], store.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^HYBRID_HIERARCHICAL: 36 questions \(section-path 12, document-title 12, cloze 12\)/);
    for (const row of ['in force', 'built-in defaults', '| LEXICAL |', '| HYBRID |']) expect(dry.stdout).toContain(row);
    // every row says what each source of questions gives it
    expect(dry.stdout).toContain('| MRR@20 by source (section-path / document-title / cloze) |');
    expect(dry.stdout).toMatch(/\n\| in force \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| in force \|\n/);
    expect(dry.stderr).toContain('dry run: nothing stored');
    // The settings in force are the built-in defaults here (none stored) and are on the grid: run once, not three times.
    const lines = dry.stdout.split('\n');
    const budgets = lines.filter((l) => /^\| (\d+|none) \|/.test(l)).length;
    const points = lines.filter((l) => l.startsWith('| ') && !l.startsWith('| point') && !l.startsWith('| passageBudget')).length - budgets;
    expect(dry.stderr).toMatch(new RegExp(`tune: ${points - 2 + budgets} points run in \\d+ s`));
    expect(JSON.parse((await dhr(['settings'], store.env)).stdout).version).toBeNull();

    const applied = await dhr(['tune', '--per-kind', '12', '--apply'], store.env);
    expect(applied.code).toBe(0);
    // The same seed and store: the same questions and scores, so the same decision as the dry run.
    expect(applied.stdout).toBe(dry.stdout);
    const settings = JSON.parse((await dhr(['settings'], store.env)).stdout);
    if (/\nchange: /.test(dry.stdout)) {
      expect(applied.stderr).toMatch(/stored as retrieval settings version 1/);
      expect(settings).toMatchObject({ version: 1, setBy: 'tune' });
      expect(settings.evidence.questions).toMatchObject({ 'section-path': 12, 'document-title': 12, cloze: 12 });
      expect(settings.evidence.margin).toBeGreaterThanOrEqual(MIN_GAIN);
      const chosen = dry.stdout.split('\n').find((l) => l.endsWith('| chosen |'))!;
      const lambda = /λ ([\d.]+)/.exec(chosen)![1];
      expect(settings.modes.HYBRID_HIERARCHICAL.lambda).toMatch(new RegExp(`^${lambda} \\((corpus|mode)\\)$`));
    } else {
      expect(dry.stdout).toMatch(/\nkeep the settings in force: /);
      expect(applied.stderr).toContain('nothing stored');
      expect(settings.version).toBeNull();
    }
  }, 300_000);
});

const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('PostgreSQL: one tune of a store at a time', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => t?.drop());

  it('refuses a second holder with CONFLICT while the first runs, and lets the next one in after it', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const first = exclusively(t.db, 'tune', 'a tune', async () => {
      started();
      await held;
      return 'first';
    });
    await running;
    await expect(exclusively(t.db, 'tune', 'a tune', async () => 'second')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('a tune is already running'),
    });
    // Another name is not held.
    await expect(exclusively(t.db, 'other', 'something else', async () => 'other')).resolves.toBe('other');
    release();
    await expect(first).resolves.toBe('first');
    await expect(exclusively(t.db, 'tune', 'a tune', async () => 'third')).resolves.toBe('third');
  });
});

describe('tuneRetrievalSettings over GraphQL', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  const TUNE = `mutation($apply: Boolean, $n: Int) { tuneRetrievalSettings(apply: $apply, questionsPerKind: $n) { id status mode apply pointsDone } }`;
  const RUN = `query($id: ID!) { tuneRun(id: $id) { id status pointsDone pointsTotal report settingsVersion error finishedAt } }`;
  beforeAll(async () => {
    encoders = await EncoderSet.load();
    api = await createTestApi({}, encoders);
    const ingested = await api.exec(`mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { failed } }`, { docs: DOCS });
    expect(dataOf(ingested).ingestDocuments.failed).toBe(0);
  }, 180_000);
  afterAll(async () => {
    await api?.close();
    await encoders?.close();
  });

  it('starts a tune at once, refuses a second meanwhile, reports progress, then the report and what it stored', async () => {
    const refused = await api.exec(TUNE, { n: 0 });
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'questionsPerKind' });
    expect((await api.exec(TUNE, { n: 1001 })).errors?.[0].message).toBe('questionsPerKind must be an integer from 1 to 1000, got 1001');
    const WITH = `mutation($kinds: [PseudoQuestionKind!], $questions: [LabelledQuestionInput!]) { tuneRetrievalSettings(kinds: $kinds, questions: $questions) { id } }`;
    expect((await api.exec(WITH, { kinds: [] })).errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'kinds' });
    const unanswered = await api.exec(WITH, { questions: [{ question: 'which river?', documentKeys: ['rhine'] }, { question: 'no answer' }] });
    expect(unanswered.errors?.[0]).toMatchObject({
      message: 'questions[1] needs a question and passageIds or documentKeys',
      extensions: { code: 'BAD_USER_INPUT', argument: 'questions' },
    });
    const badId = await api.exec(WITH, { questions: [{ question: 'which river?', passageIds: ['x1'] }] });
    expect(badId.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'questions[0].passageIds' });
    expect((await api.execAs({ keyId: 9, role: 'reader', name: 'app' }, TUNE, {})).errors?.[0].extensions?.code).toBe('FORBIDDEN');

    const started = dataOf(await api.exec(TUNE, { apply: true, n: 12 })).tuneRetrievalSettings;
    expect(started).toMatchObject({ status: 'running', mode: 'HYBRID_HIERARCHICAL', apply: true });
    expect((await api.exec(TUNE, {})).errors?.[0].extensions?.code).toBe('CONFLICT');

    let run = dataOf(await api.exec(RUN, { id: started.id })).tuneRun;
    // a bound on the wait, not a timing: a busy 2-core machine takes minutes for the grid
    const deadline = Date.now() + 240_000;
    while (run.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      run = dataOf(await api.exec(RUN, { id: started.id })).tuneRun;
      expect(run.pointsDone).toBeLessThanOrEqual(Math.max(run.pointsTotal, 0));
    }
    expect(run).toMatchObject({ status: 'succeeded', error: null });
    expect(run.pointsDone).toBe(run.pointsTotal);
    // Each distinct point runs once: the settings in force are the built-in defaults (none stored) and on the grid.
    expect(run.pointsTotal).toBe(4 + run.report.grid.length - 2 + (run.report.passageBudget?.points.length ?? 0));
    expect(run.report).toMatchObject({ pointsRun: run.pointsTotal, seconds: expect.any(Number) });
    expect(run.report.questions).toMatchObject({ 'section-path': 12, 'document-title': 12, cloze: 12 });
    const mrrs = run.report.grid.map((p: { mrr: number }) => p.mrr);
    expect(mrrs).toEqual([...mrrs].sort((a: number, b: number) => b - a));
    // The soft bound is on the grid too, each value varied alone around the settings in force (no settings were stored before).
    const inForce = resolveRanking(MODES.HYBRID_HIERARCHICAL.defaults, {}).values;
    const decays = run.report.grid.filter(
      (p: { values: Ranking }) =>
        p.values.perDocument === null &&
        p.values.lambda === inForce.lambda &&
        p.values.alpha === inForce.alpha &&
        p.values.documentAlpha === inForce.documentAlpha &&
        p.values.titleLink === inForce.titleLink &&
        p.values.titleLinkDense === inForce.titleLinkDense,
    );
    expect(decays.map((p: { values: Ranking }) => p.values.perDocumentDecay).sort()).toEqual([...TUNE_GRID.perDocumentDecay].sort());
    // No point that lowers a dense weight is run: the chooser could not take it.
    expect(run.report.grid.filter((p: { values: Ranking }) => p.values.alpha < inForce.alpha || p.values.documentAlpha < inForce.documentAlpha)).toEqual([]);
    expect(run.report.grid.some((p: { values: Ranking }) => p.values.alpha > inForce.alpha)).toBe(true);
    for (const p of decays) expect(p.label).toContain(`decay ${p.values.perDocumentDecay}`);
    // title linking on and off, the rest as in force
    const links = run.report.grid.filter((p: { values: Ranking }) => p.values.titleLink !== inForce.titleLink);
    expect(links.map((p: { values: Ranking }) => p.values.titleLink)).toEqual(TUNE_GRID.titleLink.filter((v) => v !== inForce.titleLink));
    for (const p of links) expect(p.label).toContain(`title links ${p.values.titleLink}`);
    // the question without its names mixed in and not, the rest as in force
    const named = run.report.grid.filter((p: { values: Ranking }) => p.values.titleLinkDense !== inForce.titleLinkDense);
    expect(named.map((p: { values: Ranking }) => p.values.titleLinkDense)).toEqual(TUNE_GRID.titleLinkDense.filter((v) => v !== inForce.titleLinkDense));
    for (const p of named) expect(p.label).toContain(`without names ${p.values.titleLinkDense}`);
    const settings = dataOf(await api.exec(`{ retrievalSettings { version setBy } }`)).retrievalSettings;
    if (run.report.choice.change) {
      expect(run.settingsVersion).toBe(settings.version);
      expect(settings.setBy).toBe('tune');
    } else {
      expect(run.settingsVersion).toBeNull();
      expect(settings.version).toBeNull();
    }
    expect((await api.exec(RUN, { id: '999' })).errors?.[0].extensions?.code).toBe('NOT_FOUND');
  }, 300_000);

  it('tries stage 2 budgets for the corpus (smallest first, after none), and a budget that binds loses what it leaves out', async () => {
    const db = api.testDb.db;
    const targets = (await api.models!.current())!;
    const { questions } = await pseudoQuestions(db, { perKind: 12, seed: 3 });
    const [{ documents, passages, fewest }] = await db.query<{ documents: number; passages: number; fewest: number }>(
      `SELECT (SELECT count(*)::int FROM documents) AS documents, (SELECT count(*)::int FROM passages) AS passages,
              (SELECT min(n)::int FROM (SELECT count(*) AS n FROM passages GROUP BY document_id) c) AS fewest`,
    );
    expect(documents).toBe(12);
    // k1 = 100 reaches all 12 documents: stage 2 scores every passage, too few for the product's threshold.
    const small = await budgetPlan(db, 100);
    expect(small).toMatchObject({ stage2Passages: passages, ladder: [] });
    expect(passages).toBeLessThan(BUDGET_FROM_PASSAGES);
    const plan = await budgetPlan(db, 100, 0);
    expect(plan.ladder).toEqual(budgetLadder(passages));
    const values = resolveRanking(MODES.HYBRID_HIERARCHICAL.defaults, {}).values;
    // A question whose gold is every passage outside the document stage 1 ranks first (asked here first).
    const question = 'Which river carried grain and timber on barges?';
    const first = (await retrieve(db, targets, { question, mode: 'HYBRID_HIERARCHICAL', k1: 100, k2: 20, ...values })).documents[0].documentId;
    const elsewhere: PseudoQuestion = { kind: 'feedback', question, excluded: [], answers: (k) => k.documentId !== first };
    const search = await searchBudget(db, targets, [...questions, elsewhere], plan, { values, k1: 100, k2: 20 });
    expect(search.points.map((p) => p.values.passageBudget)).toEqual([null, ...plan.ladder]);
    const [none, smallest] = search.points;
    // The smallest budget is under any document's passages, so stage 2 keeps stage 1's first document alone: that question's gold is gone.
    expect(smallest.values.passageBudget).toBeLessThan(fewest);
    expect(smallest.recall).toBeLessThan(none.recall);
    expect(search.chosen).not.toBe(smallest.values.passageBudget);
    expect(smallest.found[smallest.found.length - 1]).toBe(false);
    expect(search).toMatchObject(chooseBudget(none, search.points.slice(1), { k2: 20, depth: 100 }));
  }, 120_000);
});
