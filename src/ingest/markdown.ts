/**
 * Markdown → title tree. Headings (ATX and setext) are the tree; the text under a heading, up to
 * the next heading, is that section's own text. A lone leading `# H1` is the document title, as in
 * most Markdown documents. Only what DHR needs is parsed: headings, paragraphs and fenced code
 * (whose `#` lines must not become headings); inline markup is left to link extraction.
 */
import { IngestError } from './errors';
import { extractLinks } from './links';
import type { SectionInput } from './types';

export interface ParsedMarkdown {
  title: string;
  abstract: string;
  sections: SectionInput[];
}

interface Heading {
  level: number;
  text: string;
  /** 1-based line number, for error messages. */
  line: number;
}

/** A heading and the paragraphs under it; the first chunk (text before any heading) has none. */
interface Chunk {
  heading: Heading | null;
  paragraphs: string[];
}

const ATX = /^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const THEMATIC_BREAK = /^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/;

/** Heading text as plain words: closing #s, link markup and extra whitespace removed. */
function headingText(raw: string): string {
  const content = raw.replace(/(^|[ \t])#+[ \t]*$/, '');
  return extractLinks(content).text.replace(/\s+/g, ' ').trim();
}

function scan(markdown: string): Chunk[] {
  const lines = markdown.split(/\r\n|\r|\n/);
  const chunks: Chunk[] = [{ heading: null, paragraphs: [] }];
  let chunk = chunks[0];
  let open: string[] = []; // lines of the paragraph being read
  let openLine = 0; // line number of its first line
  let fence: { char: string; length: number; lines: string[] } | null = null;

  const flush = (): void => {
    if (open.length > 0) chunk.paragraphs.push(open.join(' '));
    open = [];
  };
  const startSection = (heading: Heading): void => {
    chunk = { heading, paragraphs: [] };
    chunks.push(chunk);
  };

  lines.forEach((line, index) => {
    const lineNo = index + 1;
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1][0] === fence.char && close[1].length >= fence.length && !close[2].trim()) {
        if (fence.lines.length > 0) chunk.paragraphs.push(fence.lines.join('\n'));
        fence = null;
      } else {
        fence.lines.push(line);
      }
      return;
    }
    const opening = FENCE.exec(line);
    if (opening && !(opening[1][0] === '`' && opening[2].includes('`'))) {
      flush();
      fence = { char: opening[1][0], length: opening[1].length, lines: [] };
      return;
    }
    const atx = ATX.exec(line);
    if (atx) {
      flush();
      startSection({ level: atx[1].length, text: headingText(atx[2]), line: lineNo });
      return;
    }
    const setext = SETEXT.exec(line);
    if (setext && open.length > 0) {
      // The paragraph just read is the heading's text (CommonMark: the whole paragraph).
      const text = headingText(open.join(' '));
      open = [];
      startSection({ level: setext[1][0] === '=' ? 1 : 2, text, line: openLine });
      return;
    }
    if (!line.trim()) {
      flush();
      return;
    }
    if (open.length === 0 && THEMATIC_BREAK.test(line)) return; // a rule carries no words
    if (open.length === 0) openLine = lineNo;
    open.push(line.trim());
  });
  flush();
  // An unclosed fence runs to the end of the document (CommonMark).
  const unclosed = fence as { lines: string[] } | null;
  if (unclosed && unclosed.lines.length > 0) chunk.paragraphs.push(unclosed.lines.join('\n'));
  return chunks;
}

/** The heading that is the document title: the first heading, level 1, and the only level 1. */
function titleHeading(chunks: Chunk[]): Chunk | null {
  const headed = chunks.filter((c) => c.heading);
  const first = headed[0];
  if (!first || first.heading!.level !== 1) return null;
  return headed.filter((c) => c.heading!.level === 1).length === 1 ? first : null;
}

/** The document title a Markdown text gives itself (its lone leading `# H1`), or null. */
export function findMarkdownTitle(markdown: string): string | null {
  const heading = titleHeading(scan(markdown))?.heading;
  return heading?.text ? heading.text : null;
}

/** Nest the section chunks by heading level: a heading nests under the nearest shallower one. */
function buildTree(chunks: Chunk[]): SectionInput[] {
  const roots: SectionInput[] = [];
  const stack: Array<{ level: number; node: SectionInput }> = [];
  for (const chunk of chunks) {
    const heading = chunk.heading!;
    const node: SectionInput = { title: heading.text };
    const text = chunk.paragraphs.join('\n\n');
    if (text) node.text = text;
    while (stack.length > 0 && stack[stack.length - 1].level >= heading.level) stack.pop();
    const parent = stack[stack.length - 1]?.node;
    if (parent) (parent.sections ??= []).push(node);
    else roots.push(node);
    stack.push({ level: heading.level, node });
  }
  return roots;
}

/**
 * Parse Markdown into a title tree. With `title` given, every heading is a section (except a lone
 * leading H1 that repeats that title); without it, the lone leading H1 is the title.
 */
export function parseMarkdown(markdown: string, title?: string, label?: string): ParsedMarkdown {
  const chunks = scan(markdown);
  const document = label ?? title ?? (titleHeading(chunks)?.heading!.text || 'markdown');
  for (const chunk of chunks) {
    if (chunk.heading && !chunk.heading.text) {
      throw new IngestError(document, `section without a title (heading at line ${chunk.heading.line})`);
    }
  }
  const given = title?.replace(/\s+/g, ' ').trim();
  let titleChunk = titleHeading(chunks);
  if (given && titleChunk && titleChunk.heading!.text !== given) titleChunk = null;
  const resolved = given || titleChunk?.heading!.text;
  if (!resolved) throw new IngestError(document, 'missing title');

  // Abstract: text before the first heading, plus the title heading's own text when it has one.
  const abstractParts = [...chunks[0].paragraphs, ...(titleChunk?.paragraphs ?? [])];
  const sectionChunks = chunks.slice(1).filter((c) => c !== titleChunk);
  return { title: resolved, abstract: abstractParts.join('\n\n'), sections: buildTree(sectionChunks) };
}
