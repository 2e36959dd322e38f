import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package root (where package.json is), whether running from src/ (ts) or dist/src/ (js). */
export function packageRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${__dirname}`);
    dir = parent;
  }
  return dir;
}
