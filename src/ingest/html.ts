/**
 * HTML → title tree (documentation sites, generated API docs). Headings h1–h6 are the tree, as in
 * Markdown; the blocks under a heading, up to the next heading, are that section's own text:
 * paragraphs, `<pre>` blocks fenced whole (fences.ts), tables a row a line (cells joined by ` | `),
 * list items a paragraph each. Links stay as `[text](href)` for link extraction (links.ts), inline
 * `<code>` in backticks, as the Markdown path writes them.
 * Dropped: a page's chrome (nav, header, footer, aside, and the elements whose ARIA role says the
 * same), script, style, forms, hidden elements, comments, and permalink anchors (`¶` self-links).
 *
 * Parsed with htmlparser2: maintained (the parser under cheerio), small (four small dependencies,
 * no native code), typed, and forgiving of the tag soup real pages hold; a full WHATWG tree
 * builder (parse5) buys nothing here, where only headings, blocks and text matter.
 */
import { DomUtils, parseDocument } from 'htmlparser2';
import { IngestError } from './errors';
import { fenceCode } from './fences';
import { extractLinks } from './links';
import { buildTree, titleHeading, type HeadedChunk } from './tree';
import type { ParsedTree } from './types';

type HtmlNode = ReturnType<typeof parseDocument>['children'][number];
type HtmlElement = Extract<HtmlNode, { attribs: Record<string, string> }>;

/** Elements that are no part of a page's content (the <title> is read apart: htmlparser2 builds no implicit <head>). */
const DROPPED = new Set([
  'head',
  'title',
  'nav',
  'header',
  'footer',
  'aside',
  'script',
  'style',
  'noscript',
  'template',
  'form',
  'button',
  'select',
  'textarea',
  'iframe',
  'object',
  'svg',
  'canvas',
]);
/** ARIA roles of the same chrome on a `<div>` (Sphinx themes, older sites). */
const DROPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search']);
/** Elements that end the text before them and start a new paragraph. */
const BLOCKS = new Set([
  'html',
  'body',
  'main',
  'article',
  'section',
  'div',
  'p',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'blockquote',
  'figure',
  'figcaption',
  'details',
  'summary',
  'address',
  'hr',
  'fieldset',
  'center',
  'caption',
  'br',
]);
const HEADING = /^h([1-6])$/;
/**
 * Deepest element nesting read. Real pages stay far below it; the reading recurses, so a page
 * nested deeper is refused with a reason rather than overflowing the stack.
 */
export const MAX_HTML_DEPTH = 512;

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

function isDropped(e: HtmlElement): boolean {
  return DROPPED.has(e.name) || DROPPED_ROLES.has(e.attribs.role) || 'hidden' in e.attribs || e.attribs['aria-hidden'] === 'true';
}

/** A link worth keeping: one with words, not a permalink (`#id` with a symbol or nothing as text). */
function link(text: string, href: string | undefined): string {
  const anchor = squash(text);
  if (!href || !/[\p{L}\p{N}]/u.test(anchor)) return href?.startsWith('#') ? '' : anchor;
  if (/[[\]]/.test(anchor) || /[\s()<>]/.test(href)) return anchor; // would break the link syntax: the words alone
  return `[${anchor}](${href})`;
}

/** Inline content as text: links as `[text](href)`, code in backticks, images by their alt text. */
function inline(node: HtmlNode): string {
  if (DomUtils.isText(node)) return node.data;
  if (!DomUtils.isTag(node) || isDropped(node)) return '';
  const inner = (): string => node.children.map(inline).join('');
  switch (node.name) {
    case 'a':
      return link(inner(), node.attribs.href);
    case 'code':
    case 'kbd':
    case 'samp': {
      const code = squash(DomUtils.textContent(node));
      if (!code) return '';
      let longest = 0;
      for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
      const ticks = '`'.repeat(longest + 1);
      return longest > 0 ? `${ticks} ${code} ${ticks}` : `${ticks}${code}${ticks}`;
    }
    case 'img':
      return node.attribs.alt ?? '';
    case 'br':
      return ' ';
    default:
      // Block elements nested in inline ones (a <div> in an <a>) read as words with a space between.
      return BLOCKS.has(node.name) ? ` ${inner()} ` : inner();
  }
}

/** The rows of a table, not those of tables nested in its cells. */
function rows(node: HtmlElement): HtmlElement[] {
  return node.children.flatMap((child) => {
    if (!DomUtils.isTag(child) || child.name === 'table') return [];
    return child.name === 'tr' ? [child] : rows(child);
  });
}

function tableText(table: HtmlElement): string {
  return rows(table)
    .map((tr) =>
      tr.children
        .filter((c): c is HtmlElement => DomUtils.isTag(c) && (c.name === 'td' || c.name === 'th'))
        .map((cell) => squash(inline(cell)))
        .join(' | '),
    )
    .filter((line) => line.replace(/[|\s]/g, ''))
    .join('\n');
}

function scan(root: HtmlNode[], source: string, warnings: string[] = []): HeadedChunk[] {
  const chunks: HeadedChunk[] = [{ heading: null, paragraphs: [] }];
  let chunk = chunks[0];
  let words = '';
  const flush = (): void => {
    const text = squash(words);
    if (text) chunk.paragraphs.push(text);
    words = '';
  };
  const add = (text: string): void => {
    flush();
    if (text.trim()) chunk.paragraphs.push(text);
  };
  const walk = (node: HtmlNode): void => {
    if (!DomUtils.isTag(node)) {
      words += inline(node);
      return;
    }
    if (isDropped(node)) return;
    const heading = HEADING.exec(node.name);
    if (heading) {
      // Images are read by their alt text and code as code, so an empty heading holds neither
      // (an icon without alt, an anchor target): it opens no section, its text stays where it is.
      const text = squash(extractLinks(inline(node)).text);
      if (!text) {
        warnings.push(`${describeHeading(node, source)} has no text: its text is read as part of the section before it`);
        return;
      }
      flush();
      chunk = { heading: { level: Number(heading[1]), text }, paragraphs: [] };
      chunks.push(chunk);
    } else if (node.name === 'pre') {
      add(fenceCode(DomUtils.textContent(node).replace(/^\n/, '').trimEnd()));
    } else if (node.name === 'table') {
      add(tableText(node));
    } else if (BLOCKS.has(node.name)) {
      flush();
      node.children.forEach(walk);
      flush();
    } else {
      // An inline element holding blocks (a <span> around a <pre>) is walked; one without, read inline.
      if (node.children.some((c) => DomUtils.isTag(c) && (BLOCKS.has(c.name) || c.name === 'pre' || c.name === 'table' || HEADING.test(c.name)))) {
        node.children.forEach(walk);
      } else {
        words += inline(node);
      }
    }
  };
  root.forEach(walk);
  flush();
  return chunks;
}

/** An untitled heading named for a warning: its tag, its line, and the anchor id it holds when it has one. */
function describeHeading(node: HtmlElement, source: string): string {
  const line = node.startIndex === null ? null : source.slice(0, node.startIndex).split('\n').length;
  const anchor = DomUtils.findOne((e) => Boolean(e.attribs.id || e.attribs.name), [node], true);
  const id = anchor ? anchor.attribs.id || anchor.attribs.name : null;
  return `the <${node.name}>${line === null ? '' : ` at line ${line}`}${id ? ` (anchor "${id}")` : ''}`;
}

function pageTitle(document: ReturnType<typeof parseDocument>): string {
  const title = DomUtils.findOne((e) => e.name === 'title', document.children);
  return title ? squash(DomUtils.textContent(title)) : '';
}

/** Parse a page, refusing one nested deeper than MAX_HTML_DEPTH (checked without recursion). */
function parsePage(html: string, label: string): ReturnType<typeof parseDocument> {
  // Start indices give the line a warning names.
  const document = parseDocument(html, { withStartIndices: true });
  const stack: Array<[HtmlNode, number]> = document.children.map((n) => [n, 1]);
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > MAX_HTML_DEPTH) throw new IngestError(label, `HTML nested deeper than ${MAX_HTML_DEPTH} elements`);
    if (DomUtils.hasChildren(node)) for (const child of node.children) stack.push([child, depth + 1]);
  }
  return document;
}

/** The title a page gives itself: its lone leading h1, else its <title>; null when it has neither. */
export function findHtmlTitle(html: string): string | null {
  const document = parsePage(html, 'html');
  return titleHeading(scan(document.children, html))?.heading!.text || pageTitle(document) || null;
}

/**
 * Parse HTML into a title tree. The title: `title` when given (a lone leading h1 repeating it is
 * not a section), else the lone leading h1, else the page's <title>.
 */
export function parseHtml(html: string, title?: string, label?: string): ParsedTree {
  const document = parsePage(html, label ?? title ?? 'html');
  const warnings: string[] = [];
  const chunks = scan(document.children, html, warnings);
  const given = title ? squash(title) : '';
  let titleChunk = titleHeading(chunks);
  if (given && titleChunk && titleChunk.heading!.text !== given) titleChunk = null;
  const resolved = given || titleChunk?.heading!.text || pageTitle(document);
  if (!resolved) throw new IngestError(label ?? 'html', 'missing title: no title given, no lone <h1> and no <title>');
  const abstract = [...chunks[0].paragraphs, ...(titleChunk?.paragraphs ?? [])].join('\n\n');
  return { title: resolved, abstract, sections: buildTree(chunks.slice(1).filter((c) => c !== titleChunk)), ...(warnings.length ? { warnings } : {}) };
}
