import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../src/paths';

/**
 * No tracked file names a work session or an issue by its number: a reader cannot resolve "the
 * change of session N" or "(issue N §2)", so docs, comments and test names say what is true (the
 * command, the measurement, the reason) instead. Git keeps the history.
 */
const root = packageRoot();
const REFERENCE = /\b(session|issue)s? #?\d+/i;

/**
 * Left out: package-lock.json (third-party text); binary files. Migrations are read too: a file
 * whose comment is reworded keeps its stores valid through its former checksum
 * (store/migration-files.ts, REWORDED).
 */
const excluded = (path: string) => path === 'package-lock.json';

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\0')
    .filter((path) => path !== '' && !excluded(path));
}

describe('history references', () => {
  it('no tracked file names a session or an issue by number', () => {
    const found: string[] = [];
    for (const path of trackedFiles()) {
      const full = join(root, path);
      if (!existsSync(full)) continue; // deleted in the working tree, not yet committed
      const bytes = readFileSync(full);
      if (bytes.includes(0)) continue; // binary
      bytes
        .toString('utf8')
        .split('\n')
        .forEach((line, i) => {
          if (REFERENCE.test(line)) found.push(`${path}:${i + 1}: ${line.trim().slice(0, 160)}`);
        });
    }
    expect(found).toEqual([]);
  });
});
