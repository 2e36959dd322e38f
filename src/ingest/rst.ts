/**
 * reStructuredText (Sphinx sources, e.g. the Python documentation) → title tree. Headings are the
 * tree, nested by the order in which their adornment styles first appear (the reST rule). Only
 * what DHR needs is parsed: headings, paragraphs, literal blocks and directive bodies as text.
 * Cross-references (`:func:`x``, `:ref:`label``, `` `text <url>`_ ``) become Markdown links
 * `[anchor](<role:target>)`, which ingest turns back into anchor text plus stored links, so the
 * embedded text reads as prose. The targets the document defines (labels, modules, objects) are
 * returned beside the tree so a caller can resolve those links to documents and sections.
 */
import { fenceCode } from './fences';
import { extractLinks } from './links';
import type { SectionInput } from './types';

/** Something a cross-reference can point at, and the section (titles below the document title) holding it. */
export interface RstTarget {
  kind: 'label' | 'module' | 'object';
  /** Label name, module name, or qualified object name (`module.Class.method`, or a C name). */
  name: string;
  /** Section titles from the top level down; empty for the document level (before any section). */
  sectionPath: string[];
  /** An object's directive (`function`, `class`, `method`…) and its signature as the passage text holds it. */
  object?: { directive: string; signature: string };
}

export interface ParsedRst {
  title: string;
  abstract: string;
  sections: SectionInput[];
  targets: RstTarget[];
}

export interface RstOptions {
  /** Title when the source has no single top-level heading. */
  fallbackTitle?: string;
  /** The document's name (e.g. `library/os`), to resolve relative `:doc:` targets. */
  docName?: string;
  /**
   * Fence literal blocks (fences.ts) so the splitter keeps each whole, as the ingest format does.
   * Off for the evaluation's corpus, which was measured with literal blocks as plain text.
   */
  fenceCode?: boolean;
}

const ADORNMENT = /^([!-/:-@[-`{-~])\1{2,}\s*$/;
const DIRECTIVE = /^(\s*)\.\.\s+([\w:-]+)::(?:\s+(.*))?$/;
const LABEL = /^\s*\.\.\s+_([^:]+):\s*$/;
const COMMENT = /^(\s*)\.\.(\s|$)/;

/** Directives whose body is not prose (index entries, raw output…): skipped. A toctree is read apart (its entries as links). */
const SKIPPED = new Set([
  'index',
  'contents',
  'highlight',
  'sectionauthor',
  'moduleauthor',
  'include',
  'literalinclude',
  'raw',
  'image',
  'figure',
  'testsetup',
  'testcleanup',
  'productionlist',
  'tabularcolumns',
  'audit-event-table',
  'c:namespace',
  'default-role',
  'role',
  'rst-class',
  'cssclass',
  'program',
]);
/** Directives whose body is code. */
const CODE = new Set(['code-block', 'sourcecode', 'code', 'doctest', 'testcode', 'testoutput', 'parsed-literal']);
/** Directives that document a Python or C object: the argument is a signature naming it. */
const OBJECT =
  /^(?:py:)?(function|class|method|classmethod|staticmethod|attribute|data|exception|decorator|decoratormethod|coroutinefunction|coroutinemethod|abstractmethod|property|opcode|pdbcommand|cmdoption|option|envvar|describe|c:function|c:type|c:member|c:macro|c:var|c:data|c:struct|c:union|c:enum|c:enumerator)$/;
/** Object kinds whose nested directives are members (`Class.method`). */
const CONTAINER = new Set(['class', 'exception']);
/** Roles that name a Python or C object (or an option, an environment variable, an opcode). */
export const OBJECT_ROLES: ReadonlySet<string> = new Set([
  'func',
  'meth',
  'class',
  'exc',
  'data',
  'attr',
  'const',
  'obj',
  'envvar',
  'option',
  'opcode',
  'c:func',
  'c:type',
  'c:data',
  'c:macro',
  'c:member',
  'c:var',
  'c:struct',
]);
/** Roles that point somewhere: they become links; other roles (`:file:`, `:kbd:`…) become plain text. */
const LINK_ROLES = new Set(['ref', 'doc', 'mod', 'term', 'keyword', 'pep', 'rfc', ...OBJECT_ROLES]);

interface Heading {
  title: string;
  style: string;
}

interface Chunk {
  heading: Heading | null;
  paragraphs: string[];
  /** Targets defined in this chunk (sectionPath filled in once the tree is built). */
  targets: Array<Omit<RstTarget, 'sectionPath'>>;
}

/** Visible text and link target of a role's content: `text <target>`, `~a.b.c` (shows `c`), `!x` (no link). */
function roleParts(role: string, content: string): { text: string; target: string | null } {
  const explicit = /^([\s\S]*?)\s*<([^<>]+)>$/.exec(content);
  if (explicit && explicit[1]) return { text: explicit[1], target: explicit[2].trim() };
  let target = explicit ? explicit[2].trim() : content.trim();
  if (target.startsWith('!')) return { text: target.slice(1), target: null };
  let text = target;
  if (target.startsWith('~')) {
    target = target.slice(1);
    text = target.split('.').pop() ?? target;
  }
  target = target.replace(/^\./, '');
  if (role === 'ref') text = text.replace(/[-_]/g, ' ');
  return { text, target };
}

/** A Markdown link ingest can extract, or the plain text when the anchor or target would break the syntax. */
function link(text: string, target: string): string {
  const anchor = text.replace(/\s+/g, ' ').trim();
  if (!anchor || /[[\]]/.test(anchor) || /[<>\n]/.test(target)) return anchor;
  return `[${anchor}](<${target}>)`;
}

/** Relative `:doc:` targets are relative to the current document's folder (Sphinx). */
function docTarget(target: string, docName: string | undefined): string {
  if (target.startsWith('/')) return target.slice(1);
  if (!docName || !docName.includes('/')) return target;
  const parts = [...docName.split('/').slice(0, -1), ...target.split('/')];
  const out: string[] = [];
  for (const p of parts) {
    if (p === '..') out.pop();
    else if (p !== '.') out.push(p);
  }
  return out.join('/');
}

/** Inline markup → plain text with cross-references as Markdown links. */
export function rstInline(text: string, docName?: string): string {
  const tokens: string[] = [];
  // Literals first, so nothing inside them is read as markup; placeholders keep them aside.
  const hold = (s: string): string => {
    tokens.push(s);
    return `\u0001${tokens.length - 1}\u0002`;
  };
  let out = text.replace(/``(.+?)``/g, (_, code: string) => hold(code));
  out = out.replace(/:((?:[a-z]+:)?[a-z-]+):`((?:[^`\\]|\\.)+)`/g, (_, rawRole: string, content: string) => {
    const role = rawRole.replace(/^py:/, '');
    const { text: shown, target } = roleParts(role, content.replace(/\\(.)/g, '$1'));
    if (!LINK_ROLES.has(role) || !target) return hold(shown);
    const full = role === 'doc' ? docTarget(target, docName) : target;
    return hold(link(shown, `${role}:${full}`));
  });
  // Hyperlinks: `text <url>`_ (named or anonymous), `name`_ references, bare `default role`.
  out = out.replace(/`([^`<]*?)\s*<([^`>]+)>`__?/g, (_, shown: string, url: string) => hold(link(shown || url, url)));
  out = out.replace(/`([^`]+)`__?/g, (_, shown: string) => hold(shown));
  out = out.replace(/`([^`]+)`/g, (_, shown: string) => hold(shown));
  out = out.replace(/\*\*([^*]+)\*\*/g, '$1').replace(/(^|[\s(/"'])\*([^*\s](?:[^*]*[^*\s])?)\*(?=$|[\s).,;:!?/"'-])/g, '$1$2');
  out = out
    .replace(/\|([\w -]+)\|/g, '$1')
    .replace(/\\ /g, '')
    .replace(/\\(.)/g, '$1');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: \u0001 and \u0002 delimit the indexes of the spans hold() set aside
  return out.replace(/\u0001(\d+)\u0002/g, (_, i: string) => tokens[Number(i)]);
}

/**
 * A toctree's entries as list lines of links (`- [Title](<doc:faq/general>)`, or the document's
 * name as its words): none for a hidden one; `self` and glob patterns name no one document.
 */
function toctreeEntries(body: string[], docName: string | undefined): string[] {
  const options = body.filter((l) => /^\s+:[\w-]+:/.test(l)).map((l) => l.trim());
  if (options.some((o) => o.startsWith(':hidden:'))) return [];
  const glob = options.some((o) => o.startsWith(':glob:'));
  const out: string[] = [];
  for (const raw of body) {
    const entry = raw.trim();
    if (!entry || /^:[\w-]+:/.test(entry) || entry === 'self' || (glob && /[*?[]/.test(entry))) continue;
    const titled = /^(.*?)\s*<([^<>]+)>$/.exec(entry);
    const target = (titled ? titled[2] : entry).trim();
    const shown = titled?.[1] || target.replace(/\.(rst|txt)$/, '');
    out.push(`- ${/^[a-z][\w+.-]*:\/\//i.test(target) ? link(shown, target) : link(shown, `doc:${docTarget(target.replace(/\.(rst|txt)$/, ''), docName)}`)}`);
  }
  return out;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;
const isBlank = (line: string | undefined): boolean => line === undefined || line.trim() === '';

/** A directive's signature → the object's name: `name(args)`, `Class.name`, or a C declaration's identifier. */
function objectName(kind: string, signature: string): string | null {
  const sig = signature.trim();
  if (!sig) return null;
  if (kind.startsWith('c:')) {
    const beforeParen = sig.includes('(') ? sig.slice(0, sig.indexOf('(')) : sig;
    const ids = beforeParen.match(/[A-Za-z_]\w*/g);
    return ids ? ids[ids.length - 1] : null;
  }
  const m = /^(?:(?:async|await|class|abstract|static|classmethod|staticmethod)\s+)*([\w.]+)/.exec(sig.replace(/^-+/, ''));
  return m ? m[1] : null;
}

interface ObjectScope {
  indent: number;
  name: string;
  container: boolean;
}

/** Scan the lines into chunks: a heading and what follows it up to the next heading. */
function scan(source: string, docName: string | undefined, fence = false): Chunk[] {
  const lines = source.replace(/\r\n?/g, '\n').replace(/\t/g, '        ').split('\n');
  const chunks: Chunk[] = [{ heading: null, paragraphs: [], targets: [] }];
  let chunk = chunks[0];
  let paragraph: string[] = [];
  let module: string | null = null;
  let scopes: ObjectScope[] = [];
  /** After a `::` paragraph or a code directive: the next more-indented block is literal. */
  let literalAfter: number | null = null;
  /** Labels seen just before a heading: they name the section that heading opens. */
  let pending: string[] = [];

  const flush = (): void => {
    if (paragraph.length > 0) {
      const text = rstInline(paragraph.join(' '), docName).replace(/\s+/g, ' ').trim();
      if (text) chunk.paragraphs.push(text);
    }
    paragraph = [];
  };
  const target = (kind: RstTarget['kind'], name: string, object?: RstTarget['object']): void => {
    chunk.targets.push({ kind, name, ...(object ? { object } : {}) });
  };
  const startSection = (title: string, style: string): void => {
    chunk = { heading: { title, style }, paragraphs: [], targets: pending.map((name) => ({ kind: 'label' as const, name })) };
    chunks.push(chunk);
    pending = [];
    scopes = [];
  };
  /** Lines from `from` while blank or indented more than `indent`; returns the index after them. */
  const blockEnd = (from: number, indent: number): number => {
    let j = from;
    while (j < lines.length && (isBlank(lines[j]) || indentOf(lines[j]) > indent)) j++;
    while (j > from && isBlank(lines[j - 1])) j--;
    return j;
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      flush();
      i++;
      continue;
    }
    const indent = indentOf(line);
    scopes = scopes.filter((s) => s.indent < indent);

    // Literal block: every line indented beyond the paragraph that announced it, kept verbatim.
    if (literalAfter !== null) {
      const announced = literalAfter;
      literalAfter = null;
      if (indent > announced) {
        flush();
        const end = blockEnd(i, announced);
        const body = lines.slice(i, end);
        const cut = Math.min(...body.filter((l) => !isBlank(l)).map(indentOf));
        const code = body
          .map((l) => l.slice(cut))
          .join('\n')
          .replace(/\n{3,}/g, '\n\n')
          .trim();
        if (code) chunk.paragraphs.push(fence ? fenceCode(code) : code);
        i = end;
        continue;
      }
    }

    // Headings: an optional overline, a title line, an underline of the same character.
    if (indent === 0) {
      const over = ADORNMENT.exec(line);
      const next = lines[i + 1];
      if (over && next !== undefined && !isBlank(next) && !ADORNMENT.test(next) && lines[i + 2]?.trim() === line.trim()) {
        flush();
        startSection(headingText(next), `o${over[1]}`);
        i += 3;
        continue;
      }
      const under = next !== undefined ? ADORNMENT.exec(next) : null;
      if (!over && under && paragraph.length === 0 && !DIRECTIVE.test(line) && !COMMENT.test(line)) {
        flush();
        startSection(headingText(line), `u${under[1]}`);
        i += 2;
        continue;
      }
      if (over && paragraph.length === 0) {
        i++; // a transition (a lone line of punctuation) carries no words
        continue;
      }
    }

    const label = LABEL.exec(line);
    if (label) {
      flush();
      // A label names the section whose heading follows it, or else the section it sits in.
      let j = i + 1;
      while (j < lines.length && (isBlank(lines[j]) || LABEL.test(lines[j]))) j++;
      const headingNext =
        j < lines.length && indentOf(lines[j]) === 0 && (ADORNMENT.test(lines[j]) || (lines[j + 1] !== undefined && ADORNMENT.test(lines[j + 1])));
      if (headingNext) pending.push(label[1].trim().toLowerCase());
      else target('label', label[1].trim().toLowerCase());
      i++;
      continue;
    }

    const directive = DIRECTIVE.exec(line);
    if (directive) {
      flush();
      const name = directive[2];
      const argument = (directive[3] ?? '').trim();
      const end = blockEnd(i + 1, indent);
      const object = OBJECT.exec(name);
      // An object directive may document several objects, one signature per line (`.. data:: stdin` / `stdout`).
      const signatures = argument ? [argument] : [];
      let body = i + 1;
      if (object) {
        while (body < end && !isBlank(lines[body]) && !/^\s+:[\w-]+:/.test(lines[body]) && !DIRECTIVE.test(lines[body])) {
          signatures.push(lines[body].trim());
          body++;
        }
      }
      // Skip the option lines (`:noindex:`) that follow the header.
      while (body < end && /^\s+:[\w-]+:/.test(lines[body]) && !/^\s+:[\w-]+:`/.test(lines[body])) body++;
      if (name === 'module' || name === 'currentmodule' || name === 'py:module' || name === 'py:currentmodule') {
        module = argument && argument !== 'None' ? argument : null;
        if (name.endsWith('module') && !name.endsWith('currentmodule') && module) target('module', module);
        i = end;
      } else if (name === 'toctree') {
        // A visible table of contents is the text of an index page that holds nothing else (the
        // Python docs' contents.rst, faq/index.rst): its entries, a link a line, to the documents.
        const entries = toctreeEntries(lines.slice(i + 1, end), docName);
        if (entries.length > 0) chunk.paragraphs.push(entries.join('\n'));
        i = end;
      } else if (SKIPPED.has(name) || name.startsWith('latex')) {
        i = end;
      } else if (CODE.has(name)) {
        literalAfter = indent;
        i = body;
      } else if (object) {
        const kind = object[1];
        const parent = [...scopes].reverse().find((s) => s.container);
        let first: string | null = null;
        for (const signature of signatures) {
          const objName = objectName(kind, signature);
          if (!objName) continue;
          const qualified =
            kind.startsWith('c:') || kind === 'envvar' || kind === 'cmdoption' || kind === 'option'
              ? objName
              : parent && !objName.includes('.')
                ? `${parent.name}.${objName}`
                : module && !objName.startsWith(`${module}.`)
                  ? `${module}.${objName}`
                  : objName;
          // The signature is text too: it names what the section documents.
          const text = signature.replace(/\\(.)/g, '$1');
          target('object', qualified, { directive: kind, signature: text });
          first ??= qualified;
          chunk.paragraphs.push(text);
        }
        if (first) scopes.push({ indent, name: first, container: CONTAINER.has(kind) });
        i = body;
      } else {
        // Admonitions, version notes, `only`, `glossary`…: the body is prose, read as usual.
        if (argument) paragraph.push(argument);
        flush();
        i = body;
      }
      continue;
    }
    if (COMMENT.test(line)) {
      flush();
      i = blockEnd(i + 1, indent); // a comment and everything indented under it
      continue;
    }

    // Tables: borders carry no words; cell separators become spaces.
    if (/^\s*[+=][-=+ ]*$/.test(line) && /[-=]{3}/.test(line)) {
      i++;
      continue;
    }
    let text = line.trim();
    if (text.startsWith('|') && text.endsWith('|')) text = text.replace(/\|/g, ' ');
    // A list item starts a paragraph of its own.
    if (/^([-*+•]|\d+[.)]|#\.|\(\d+\))\s+/.test(text)) flush();
    if (text === '::') {
      flush();
      literalAfter = indent;
    } else if (text.endsWith('::')) {
      paragraph.push(text.replace(/\s*::$/, /\s::$/.test(text) ? '' : ':'));
      flush();
      literalAfter = indent;
    } else {
      paragraph.push(text);
    }
    i++;
  }
  flush();
  return chunks;

  function headingText(raw: string): string {
    // Headings are plain titles: a cross-reference in one keeps only its anchor text.
    return extractLinks(rstInline(raw.trim(), docName)).text.replace(/\s+/g, ' ').trim();
  }
}

/** The document title: the first heading, when no other heading shares its style (reST). */
function titleChunkOf(chunks: Chunk[]): Chunk | null {
  const headed = chunks.filter((c) => c.heading);
  const first = headed[0];
  return first && headed.filter((c) => c.heading!.style === first.heading!.style).length === 1 ? first : null;
}

/**
 * The title a reST source gives itself, '' when it has no heading. Without a unique top heading
 * the sections stay as they are, and the first heading still names the document, as Sphinx names the page.
 */
function ownTitle(chunks: Chunk[]): string {
  return titleChunkOf(chunks)?.heading!.title || chunks.find((c) => c.heading)?.heading!.title || '';
}

/** The title a reST source gives itself (its first heading), or null: the file walker then names it by its file. */
export function findRstTitle(source: string): string | null {
  return ownTitle(scan(source, undefined)) || null;
}

/** Parse reST into a title tree (section text with links as Markdown) and the targets it defines. */
export function parseRst(source: string, options: RstOptions = {}): ParsedRst {
  const chunks = scan(source, options.docName, options.fenceCode);
  const titleChunk = titleChunkOf(chunks);
  const title = ownTitle(chunks) || options.fallbackTitle || 'untitled';
  const targets: RstTarget[] = [];
  const atDocument = [...chunks[0].targets, ...(titleChunk?.targets ?? [])];
  for (const t of atDocument) targets.push({ ...t, sectionPath: [] });
  const abstract = [...chunks[0].paragraphs, ...(titleChunk?.paragraphs ?? [])].join('\n\n');

  // Levels by first appearance of each adornment style.
  const styles: string[] = [];
  const roots: SectionInput[] = [];
  const stack: Array<{ level: number; node: SectionInput; path: string[] }> = [];
  for (const chunk of chunks.slice(1)) {
    if (chunk === titleChunk) continue;
    const heading = chunk.heading!;
    if (!styles.includes(heading.style)) styles.push(heading.style);
    const level = styles.indexOf(heading.style);
    while (stack.length > 0 && stack[stack.length - 1].level >= level) stack.pop();
    const parent = stack[stack.length - 1];
    const node: SectionInput = { title: heading.title || 'untitled' };
    const text = chunk.paragraphs.join('\n\n');
    if (text) node.text = text;
    if (parent) (parent.node.sections ??= []).push(node);
    else roots.push(node);
    const path = [...(parent?.path ?? []), node.title];
    stack.push({ level, node, path });
    for (const t of chunk.targets) targets.push({ ...t, sectionPath: path });
  }
  return { title, abstract, sections: roots, targets };
}
