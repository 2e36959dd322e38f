import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { packageRoot } from '../src/paths';

/**
 * Every relative link in the repository's Markdown (README.md, docs/, training/) leads to a file
 * that exists and, into a Markdown page, to a heading it has: pages are split and headings renamed,
 * and a reader following a link should land where it says.
 */
const root = packageRoot();

/** Markdown without fenced code blocks, whose `# comments` are no headings. */
const withoutBlocks = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
/** …and without inline code, where `[text](target)` is an example, not a link. */
const prose = (markdown: string) => withoutBlocks(markdown).replace(/`[^`\n]*`/g, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, '')
    .replace(/ /g, '-');

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (!anchors) {
    anchors = new Set();
    const seen = new Map<string, number>();
    for (const [, heading] of withoutBlocks(readFileSync(path, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
      const base = slug(heading);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(path, anchors);
  }
  return anchors;
}

const pages = execFileSync('git', ['ls-files', '-z', '*.md'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((path) => path !== '' && !path.startsWith('test/fixtures/') && existsSync(join(root, path)));

describe('links in the Markdown pages', () => {
  it('lead to files that exist and headings they have', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const full = join(root, page);
      for (const [, target] of prose(readFileSync(full, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#', 2);
        const to = path ? normalize(join(dirname(full), decodeURI(path))) : full;
        if (!existsSync(to)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
