import { accuracyChart, curveChart, renderSvg } from './charts';

describe('charts render to SVG without a browser', () => {
  it('draws one line per mode with its legend', async () => {
    const rows = ['HIERARCHICAL', 'FLAT'].flatMap((mode, m) => [1, 5, 20, 100].map((k, i) => ({ mode, k, accuracy: (i + m) / 5 })));
    const svg = await renderSvg(accuracyChart('test chart', 'accuracy', rows));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('HIERARCHICAL');
    expect(svg).toContain('FLAT');
    expect(svg).toContain('test chart');
    // One line group per mode (Vega facets the line mark by colour).
    expect(svg.match(/class="mark-line role-mark/g)).toHaveLength(2);
  });

  it('marks the chosen parameter with a rule', async () => {
    const svg = await renderSvg(
      curveChart(
        'λ',
        'λ',
        [
          { x: 0, value: 0.2, series: 'Top-20' },
          { x: 1, value: 0.4, series: 'Top-20' },
        ],
        'score',
        0.5,
      ),
    );
    expect(svg).toContain('mark-rule');
  });
});
