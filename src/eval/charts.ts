/**
 * SVG charts with Vega-Lite, rendered headlessly (no canvas, no browser). Vega ships as ES
 * modules only, hence the dynamic imports from this CommonJS build.
 */
import type { TopLevelSpec } from 'vega-lite' with { 'resolution-mode': 'import' };

export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const vega = await import('vega');
  const vegaLite = await import('vega-lite');
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const WIDTH = 420;
const HEIGHT = 260;

/** What every chart shares: schema, title, size, an opaque background. */
function frame(title: string) {
  return { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title, width: WIDTH, height: HEIGHT, background: 'white' };
}

/** Top-k accuracy per mode: k on a log axis, one line per mode. */
export function accuracyChart(title: string, yTitle: string, rows: Array<{ mode: string; k: number; accuracy: number }>): TopLevelSpec {
  return {
    ...frame(title),
    data: { values: rows },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'k', type: 'quantitative', scale: { type: 'log' }, axis: { values: [1, 5, 20, 100], title: 'k' } },
      y: { field: 'accuracy', type: 'quantitative', scale: { domain: [0, 1] }, title: yTitle },
      color: { field: 'mode', type: 'nominal', title: 'mode', sort: null },
    },
  };
}

/** A metric against a parameter (λ, k1), with the chosen value marked. */
export function curveChart(
  title: string,
  xTitle: string,
  rows: Array<{ x: number; value: number; series: string }>,
  yTitle: string,
  chosen?: number,
  logX = false,
): TopLevelSpec {
  const line = {
    data: { values: rows },
    mark: { type: 'line' as const, point: true },
    encoding: {
      x: { field: 'x', type: 'quantitative' as const, title: xTitle, ...(logX ? { scale: { type: 'log' as const, nice: false }, axis: { values: [...new Set(rows.map((r) => r.x))] } } : {}) },
      y: { field: 'value', type: 'quantitative' as const, title: yTitle, scale: { zero: false } },
      color: { field: 'series', type: 'nominal' as const, title: null, sort: null },
    },
  };
  const rule = chosen === undefined ? [] : [{ data: { values: [{ x: chosen }] }, mark: { type: 'rule' as const, strokeDash: [4, 4], color: 'gray' }, encoding: { x: { field: 'x', type: 'quantitative' as const } } }];
  return {
    ...frame(title),
    layer: [line, ...rule],
  } as TopLevelSpec;
}
