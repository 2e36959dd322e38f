import { join } from 'node:path';
import { buildIsStale, builtEntry } from '../../bin/build-state';
import { packageRoot } from '../../src/paths';

/**
 * Node's arguments that start the real CLI of the tree at `root`, before dhr's own: the build
 * (dist/, what `npm start` runs) when it is at least as new as the sources (bin/build-state.js,
 * bin/dhr.js's own check), which starts in a fraction of tsx's time; otherwise the TypeScript
 * through tsx, so a change not yet built is what the tests run. `.ci/run` builds first.
 */
export function cliEntry(root = packageRoot()): string[] {
  return buildIsStale(root) ? ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')] : [builtEntry(root)];
}
