import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths';

/**
 * Node's arguments that start the real CLI of the tree at `root`, before dhr's own: the build
 * (dist/, what `npm start` runs) when it is at least as new as the sources, which starts in a
 * fraction of tsx's time; otherwise the TypeScript through tsx, so a change not yet built is
 * what the tests run. `.ci/run` builds first.
 */
export function cliEntry(root = packageRoot()): string[] {
  const built = join(root, 'dist', 'src', 'cli', 'main.js');
  return builtIsCurrent(root, built) ? [built] : ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];
}

/** The same check as bin/dhr.js: the build stamp newer than every source and tsconfig. */
function builtIsCurrent(root: string, built: string): boolean {
  const stamp = join(root, 'dist', '.build-stamp');
  if (!existsSync(built) || !existsSync(stamp)) return false;
  const configs = ['tsconfig.json', 'tsconfig.build.json'].map((file) => statSync(join(root, file)).mtimeMs);
  return Math.max(newestSource(join(root, 'src')), ...configs) <= statSync(stamp).mtimeMs;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}
