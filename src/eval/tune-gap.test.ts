import { kindVerdicts, sameBound, spearman, type TuneGap } from './tune-gap';

/** Pearson's r of the ranks, written out for distinct values: 1 − 6Σd² / (n(n² − 1)). */
const distinctSpearman = (a: number[], b: number[]) => {
  const rank = (x: number[]) => x.map((v) => x.filter((w) => w < v).length);
  const ra = rank(a);
  const rb = rank(b);
  const n = a.length;
  return 1 - (6 * ra.reduce((s, r, i) => s + (r - rb[i]) ** 2, 0)) / (n * (n * n - 1));
};

describe('spearman', () => {
  it('agrees with the closed form on distinct values', () => {
    const a = [0.3, 0.1, 0.7, 0.5, 0.2];
    const b = [40, 10, 50, 20, 30];
    expect(spearman(a, b)).toBeCloseTo(distinctSpearman(a, b), 10);
    expect(spearman(a, a)).toBeCloseTo(1, 10);
    expect(
      spearman(
        a,
        a.map((x) => -x),
      ),
    ).toBeCloseTo(-1, 10);
  });

  it('gives ties their mean rank and a constant side 0', () => {
    // ranks of [1, 1, 2] are [0.5, 0.5, 2]; against [0, 1, 2] Pearson's r of the ranks is √3/2
    expect(spearman([1, 1, 2], [0, 1, 2])).toBeCloseTo(Math.sqrt(3) / 2, 10);
    expect(spearman([1, 1, 1], [0, 1, 2])).toBe(0);
  });
});

describe('kindVerdicts', () => {
  const row = (point: string, top5: number, mrr: number, cloze: number, title: number): TuneGap['labelled'][number] => ({
    point,
    top: { '1': 0, '5': top5, '20': 0 },
    document1: 0,
    sectionGivenDocument: null,
    p50Ms: 0,
    pseudo: { mrr, byKind: { cloze: { questions: 40, mrr: cloze }, 'section-path': { questions: 30, mrr: title } } },
    bound: { perDocument: null, perDocumentDecay: 0.01 },
  });

  it('names the point each source would choose and how well it orders the grid', () => {
    const rows = [row('{"alpha":0.7}', 66, 0.4, 0.2, 0.6), row('{"alpha":0.3}', 60, 0.5, 0.5, 0.4), row('{"lambda":2}', 62, 0.45, 0.4, 0.5)];
    const v = Object.fromEntries(kindVerdicts(rows).map((k) => [k.kind, k]));
    expect(v.all).toMatchObject({ choice: '{"alpha":0.3}', choiceTop5: 60 });
    expect(v.all.spearman).toBeCloseTo(-1, 10);
    expect(v.cloze).toMatchObject({ questions: 40, choice: '{"alpha":0.3}' });
    expect(v['section-path']).toMatchObject({ questions: 30, choice: '{"alpha":0.7}', choiceTop5: 66 });
    expect(v['section-path'].spearman).toBeCloseTo(1, 10);
  });
});

describe('sameBound', () => {
  it('compares the bound per document in both forms, hard and soft', () => {
    const defaults = { perDocument: null, perDocumentDecay: 0.01 };
    expect(sameBound(defaults, { perDocument: null, perDocumentDecay: 0.01 })).toBe(true);
    expect(sameBound(defaults, { perDocument: 1, perDocumentDecay: 0.01 })).toBe(false);
    expect(sameBound(defaults, { perDocument: null, perDocumentDecay: 0.3 })).toBe(false);
  });
});
