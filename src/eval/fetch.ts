/**
 * Debian packages as data sources: `apt-get download` (no root needed) into the cache folder,
 * then `dpkg-deb -x` beside it. Both steps are skipped when their result is already there.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

/** The folder a Debian package is extracted into (its file system tree), downloading it first if needed. */
export function debianPackage(name: string, cacheDir: string): string {
  mkdirSync(cacheDir, { recursive: true });
  const root = path.join(cacheDir, name);
  if (existsSync(path.join(root, '.extracted'))) return root;
  const debOf = () => readdirSync(cacheDir).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
  if (!debOf()) {
    console.error(`fetching Debian package ${name} (apt-get download) into ${cacheDir}`);
    execFileSync('apt-get', ['download', name], { cwd: cacheDir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const deb = debOf();
  if (!deb) throw new Error(`apt-get download ${name} left no .deb in ${cacheDir}`);
  mkdirSync(root, { recursive: true });
  execFileSync('dpkg-deb', ['-x', path.join(cacheDir, deb), root]);
  execFileSync('touch', [path.join(root, '.extracted')]);
  return root;
}
