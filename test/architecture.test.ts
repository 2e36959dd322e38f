import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { packageRoot } from '../src/paths';

/**
 * The layers of docs/architecture.md, lowest first: a module may import from its own folder
 * and from lower layers only, and nothing in src/ imports from outside it (bench/, test/).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'paths', 'generated'],
  ['ingest', 'encoders', 'adapters'],
  ['store'],
  ['retrieval', 'observability'],
  // Above retrieval: embedding stores sentence vectors split as answer highlights split them.
  ['pipeline'],
  ['training'],
  ['tuning'],
  ['config'],
  ['graphql', 'http'],
  // The MCP server's tools call what the resolvers call, with the resolvers' per-request context.
  ['mcp'],
  ['server', 'eval'],
  ['cli'],
];

const root = packageRoot();
const src = join(root, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The top folder (or file, without .ts) under src/ that a path belongs to. */
const unitOf = (path: string) => relative(src, path).split(/[\\/]/)[0].replace(/\.ts$/, '');
const rankOf = (unit: string) => LAYERS.findIndex((layer) => layer.includes(unit));

/** Relative imports of a file, type-only ones included, as paths without extension. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((i) => i.fileName)
    .filter((f) => f.startsWith('.'))
    .map((f) => normalize(join(dirname(file), f)));
}

const files = sources(src);
const graph = new Map(files.map((f) => [f.replace(/\.ts$/, ''), importsOf(f)]));

describe('architecture', () => {
  it('puts every folder of src/ in a layer', () => {
    expect([...new Set(files.map(unitOf))].filter((u) => rankOf(u) < 0)).toEqual([]);
  });

  it('has no arrow from a lower layer to a higher one, nor out of src/', () => {
    const wrong: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const name = `${relative(root, from)} → ${relative(root, to)}`;
        if (relative(src, to).startsWith('..')) {
          wrong.push(`${name} (outside src/)`);
          continue;
        }
        const [a, b] = [unitOf(from), unitOf(to)];
        if (a !== b && rankOf(b) >= rankOf(a)) wrong.push(name);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('has no import cycle (type-only imports count)', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (!graph.has(next)) continue;
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(root, f)).join(' → '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
