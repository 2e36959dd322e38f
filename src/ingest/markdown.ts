/**
 * Markdown → title tree, through markdown-it (CommonMark, with GitHub's tables). Headings (ATX and
 * setext) are the tree; the blocks under a heading, up to the next heading, are that section's own
 * text: paragraphs, code blocks (fenced and indented) fenced for the splitter to keep whole, lists (an item a line), tables (a row a line).
 * Dropped: HTML comments (`<!-- … -->`), link-reference definitions (`[id]: url`, which the
 * parser consumes), thematic breaks, and the markup of HTML blocks. Links stay as `[text](url)`,
 * reference links resolved from their definitions, for link extraction (links.ts) to read.
 */
import MarkdownIt from 'markdown-it';
import { IngestError } from './errors';
import { fenceCode } from './fences';
import { extractLinks } from './links';
import { buildTree, mergeUntitled, titleHeading } from './tree';
import type { ParsedTree } from './types';

interface Heading {
  level: number;
  text: string;
  /** The heading's inline source as written (`<CR>` in `### <CR>`): its title when its text reads as nothing. */
  source: string;
  /** 1-based line number, for warnings. */
  line: number;
}

/** A heading and the paragraphs under it; the first chunk (text before any heading) has none. */
interface Chunk {
  heading: Heading | null;
  paragraphs: string[];
}

/** markdown-it's token (its types ship as ES modules, which this CommonJS build cannot import by path). */
type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

/** html: true, so that HTML blocks and comments are recognised (and dropped) rather than read as text. */
const parser = new MarkdownIt({ html: true });

/** A block's inline content as text: emphasis markers dropped, code spans kept in backticks, links as `[text](url)`. */
function inlineSource(children: Token[] | null): string {
  const out: string[] = [];
  const hrefs: string[] = [];
  for (const t of children ?? []) {
    switch (t.type) {
      case 'text':
        out.push(t.content);
        break;
      case 'code_inline':
        out.push(`\`${t.content}\``);
        break;
      case 'softbreak':
      case 'hardbreak':
        out.push(' ');
        break;
      case 'link_open':
        hrefs.push(String(t.attrGet('href') ?? ''));
        out.push('[');
        break;
      case 'link_close':
        out.push(`](${hrefs.pop() ?? ''})`);
        break;
      case 'image':
        out.push(t.content);
        break;
      case 'html_inline':
        break; // a tag or a comment: no words
      default:
        out.push(t.content); // emphasis and strikethrough markers have none
    }
  }
  return out.join('');
}

/** Heading text as plain words: link markup and extra whitespace removed. */
function headingText(children: Token[] | null): string {
  return extractLinks(inlineSource(children)).text.replace(/\s+/g, ' ').trim();
}

/** An HTML block's words: comments and tags dropped. */
function htmlBlockText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(-->|$)/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A heading whose text reads as nothing (`### <CR>`: CommonMark takes `<CR>` for an inline HTML
 * tag) takes its source as its title, and one with no words in its source either (`##`, `## <!-- -->`)
 * is no heading: its blocks join the section before it. Either way the page ingests, warned.
 */
function titleUntitled(chunks: Chunk[], warnings: string[]): Chunk[] {
  const said: { line: number; warning: string }[] = [];
  for (const chunk of chunks) {
    const heading = chunk.heading;
    if (!heading || heading.text) continue;
    const source = squash(heading.source.replace(/<!--[\s\S]*?(-->|$)/g, ' '));
    if (!/[\p{L}\p{N}]/u.test(source)) continue;
    heading.text = source;
    said.push({ line: heading.line, warning: `the heading at line ${heading.line} has no text once its markup is read: titled by its source, "${source}"` });
  }
  const kept = mergeUntitled(chunks, ({ heading }) =>
    said.push({ line: heading!.line, warning: `the heading at line ${heading!.line} is empty: its text is read as part of the section before it` }),
  );
  warnings.push(...said.sort((a, b) => a.line - b.line).map((s) => s.warning));
  return kept;
}

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

function scan(markdown: string, warnings: string[] = []): Chunk[] {
  const tokens = parser.parse(markdown, {});
  const chunks: Chunk[] = [{ heading: null, paragraphs: [] }];
  let chunk = chunks[0];
  const add = (text: string): void => {
    if (text.trim()) chunk.paragraphs.push(text);
  };
  // Lists (nested ones indented) and tables gather their lines, then count as one block.
  let depth = 0;
  let listLines: string[] = [];
  let itemMarker: string | null = null;
  let row: string[] | null = null;
  let tableRows: string[] = [];
  /** A block's text: a line of the list being read, or a paragraph of its own. */
  const block = (text: string): void => {
    if (depth === 0) add(text);
    else if (text) listLines.push(text);
  };

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    switch (t.type) {
      case 'heading_open': {
        const inline = tokens[i + 1];
        const heading = { level: Number(t.tag.slice(1)), text: headingText(inline.children), source: inline.content, line: (t.map?.[0] ?? 0) + 1 };
        chunk = { heading, paragraphs: [] };
        chunks.push(chunk);
        i += 2; // the inline token and heading_close
        break;
      }
      case 'bullet_list_open':
      case 'ordered_list_open':
        depth++;
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        if (--depth === 0) {
          add(listLines.join('\n'));
          listLines = [];
        }
        break;
      case 'list_item_open':
        // markdown-it gives an ordered item its number in `info`, its delimiter in `markup`.
        itemMarker = `${'  '.repeat(depth - 1)}${t.info}${t.markup} `;
        break;
      case 'tr_open':
        row = [];
        break;
      case 'tr_close':
        tableRows.push(row!.join(' | '));
        row = null;
        break;
      case 'table_close':
        block(tableRows.join('\n'));
        tableRows = [];
        break;
      case 'inline': {
        const text = inlineSource(t.children).trim();
        if (row) row.push(text);
        else if (depth > 0) {
          listLines.push((itemMarker ?? '  '.repeat(depth)) + text);
          itemMarker = null;
        } else add(text);
        break;
      }
      case 'fence':
      case 'code_block':
        block(fenceCode(t.content.replace(/\n$/, '')));
        break;
      case 'html_block':
        block(htmlBlockText(t.content));
        break;
      default:
        break; // paragraph, blockquote and table boundaries, thematic breaks: no words of their own
    }
  }
  return titleUntitled(chunks, warnings);
}

/** The document title a Markdown text gives itself (its lone leading `# H1`), or null. */
export function findMarkdownTitle(markdown: string): string | null {
  const heading = titleHeading(scan(markdown))?.heading;
  return heading?.text ? heading.text : null;
}

/**
 * Parse Markdown into a title tree. With `title` given, every heading is a section (except a lone
 * leading H1 that repeats that title); without it, the lone leading H1 is the title.
 */
export function parseMarkdown(markdown: string, title?: string, label?: string): ParsedTree {
  const warnings: string[] = [];
  const chunks = scan(markdown, warnings);
  const document = label ?? title ?? (titleHeading(chunks)?.heading!.text || 'markdown');
  const given = title?.replace(/\s+/g, ' ').trim();
  let titleChunk = titleHeading(chunks);
  if (given && titleChunk && titleChunk.heading!.text !== given) titleChunk = null;
  const resolved = given || titleChunk?.heading!.text;
  if (!resolved) throw new IngestError(document, 'missing title');

  // Abstract: text before the first heading, plus the title heading's own text when it has one.
  const abstractParts = [...chunks[0].paragraphs, ...(titleChunk?.paragraphs ?? [])];
  const sectionChunks = chunks.slice(1).filter((c) => c !== titleChunk);
  return { title: resolved, abstract: abstractParts.join('\n\n'), sections: buildTree(sectionChunks), ...(warnings.length ? { warnings } : {}) };
}
