/**
 * The ingest formats, one entry each: the file extensions the walker reads, the DocumentInput
 * field a source arrives in, and the parser that turns it into a title tree. prepare.ts, the file
 * walker (files.ts), the GraphQL DocumentInput and the CLI are derived from this table
 * (test/formats.test.ts checks that they agree).
 */
import { htmlCharset } from './charset';
import { parseHtml, findHtmlTitle } from './html';
import { findMarkdownTitle, parseMarkdown } from './markdown';
import { findRstTitle, parseRst } from './rst';
import type { DocumentInput, ParsedTree, SourceField } from './types';

/** A file of documents: each is a DocumentInput as JSON (a title tree, or a source field of a format below). */
export interface DocumentsFormat {
  description: string;
  extensions: readonly string[];
  /** One JSON value per line (JSONL) rather than one value (an object or an array of objects) per file. */
  lines: boolean;
}

/** A format whose file is one document, its whole text one DocumentInput field. */
export interface SourceFormat {
  /** One line: the GraphQL field's description, the format table of docs/ingest.md. */
  description: string;
  extensions: readonly string[];
  field: SourceField;
  /**
   * The title tree of `source`. `title` is the caller's, when given; `key` names the document
   * (reST resolves relative `:doc:` links from it); `label` names it in errors.
   */
  parse(source: string, given: { title?: string; key?: string; label: string }): ParsedTree;
  /** The DocumentInput a file of this format is read as (the walker adds the key). */
  fromFile(source: string, fileName: string): DocumentInput;
  /** The encoding a file of this format is read in when it is not UTF-8 (charset.ts: HTML's declared one, else windows-1252); absent: UTF-8 only. */
  charsetOf?: (bytes: Uint8Array) => string;
}

/** The source in its field, titled by the file's name only when the source gives itself no title. */
const titledBy =
  (field: SourceField, titleOf: (source: string) => string | null) =>
  (source: string, fileName: string): DocumentInput =>
    titleOf(source) === null ? { [field]: source, title: fileName } : { [field]: source };

export const DOCUMENT_FILE_FORMATS = {
  json: {
    description: 'A document as JSON (a title tree, or one of the fields below), or an array of them.',
    extensions: ['.json'],
    lines: false,
  },
  jsonl: {
    description: 'One JSON document per line.',
    extensions: ['.jsonl', '.ndjson'],
    lines: true,
  },
} satisfies Record<string, DocumentsFormat>;

export const SOURCE_FORMATS = {
  markdown: {
    description:
      'Markdown (CommonMark and GitHub tables, markdown-it): headings are the tree, a lone leading `# H1` the title; code blocks kept whole; HTML comments and link-reference definitions dropped, links resolved from their definitions.',
    extensions: ['.md', '.markdown'],
    field: 'markdown',
    parse: (source, { title, label }) => parseMarkdown(source, title, label),
    fromFile: titledBy('markdown', findMarkdownTitle),
  },
  html: {
    description:
      'HTML (htmlparser2): h1–h6 are the tree, the title a lone leading h1 or else `<title>`; nav, header, footer, aside, script and style dropped; `<pre>` kept whole, tables a row a line, links kept.',
    extensions: ['.html', '.htm'],
    field: 'html',
    parse: (source, { title, label }) => parseHtml(source, title, label),
    fromFile: titledBy('html', findHtmlTitle),
    charsetOf: htmlCharset,
  },
  rst: {
    description:
      'reStructuredText (Sphinx sources): headings are the tree, nested by adornment style; literal blocks kept whole; cross-references kept as links.',
    extensions: ['.rst', '.rest'],
    field: 'rst',
    parse: (source, { title, key, label }) => {
      const parsed = parseRst(source, { fallbackTitle: title ?? label, docName: key, fenceCode: true });
      return { title: title ?? parsed.title, abstract: parsed.abstract, sections: parsed.sections };
    },
    fromFile: titledBy('rst', findRstTitle),
  },
  text: {
    description: 'Plain text, all of it the abstract, under the given title; a file’s first non-empty line is its title.',
    extensions: ['.txt'],
    field: 'text',
    parse: (source, { title }) => ({ title: title ?? '', abstract: source, sections: [] }),
    fromFile: (source) => {
      const first = /^[ \t]*(\S[^\r\n]*)(?:\r\n|\r|\n|$)/m.exec(source);
      return first ? { title: first[1].trim(), text: source.slice(first.index + first[0].length) } : { text: source };
    },
  },
} satisfies Record<SourceField, SourceFormat>;

export type DocumentFileFormat = keyof typeof DOCUMENT_FILE_FORMATS;

/** The source fields, in table order. */
export const SOURCE_FIELDS = Object.keys(SOURCE_FORMATS) as SourceField[];

/** Every extension the walker reads, lower case with the dot. */
export const FILE_EXTENSIONS: readonly string[] = [...Object.values(DOCUMENT_FILE_FORMATS), ...Object.values(SOURCE_FORMATS)].flatMap((f) => f.extensions);

/** The format of a file by its extension (case-insensitive), or null when ingest does not read it. */
export function formatOfExtension(ext: string): { documents: DocumentsFormat } | { source: SourceFormat } | null {
  const lower = ext.toLowerCase();
  for (const f of Object.values(DOCUMENT_FILE_FORMATS)) if (f.extensions.includes(lower)) return { documents: f };
  for (const f of Object.values(SOURCE_FORMATS)) if ((f.extensions as readonly string[]).includes(lower)) return { source: f };
  return null;
}
