/**
 * DocumentInput → PreparedDocument: validate one document, resolve its title tree (a JSON tree, or
 * a source field parsed by its format: formats.ts), flatten sections in pre-order and split each section's own text into
 * passages. Pure and deterministic, so the store only writes rows and the hash tells it when a
 * re-ingested document is unchanged.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_MAX_METADATA_DEPTH, DEFAULT_MAX_SECTION_DEPTH, jsonDeeperThan, sectionsDeeperThan } from './depth';
import { IngestError } from './errors';
import { findFences, stripFences } from './fences';
import { SOURCE_FIELDS, SOURCE_FORMATS } from './formats';
import { extractLinks } from './links';
import { splitPassages } from './splitter';
import { documentSummary, passageEncodingText } from './summary';
import { vectorProblem } from './vectors';
import {
  DEFAULT_INGEST_OPTIONS,
  type DocumentInput,
  type IngestOptions,
  type ParsedTree,
  type PreparedDocument,
  type PreparedPassage,
  type PreparedSection,
  type SectionInput,
  SOURCE_BYTES_PER_DOCUMENT_BYTE,
  sourceBytesLimit,
} from './types';

const MAX_WORDS_LIMIT = 10_000;

/** Fill in defaults and check the options; bad options are the caller's bug, hence RangeError. */
export function resolveIngestOptions(options?: Partial<IngestOptions>): IngestOptions {
  const maxWords = options?.maxWords ?? DEFAULT_INGEST_OPTIONS.maxWords;
  const maxDocumentBytes = options?.maxDocumentBytes ?? DEFAULT_INGEST_OPTIONS.maxDocumentBytes;
  if (!Number.isInteger(maxWords) || maxWords < 1 || maxWords > MAX_WORDS_LIMIT) {
    throw new RangeError(`maxWords must be an integer from 1 to ${MAX_WORDS_LIMIT}, got ${maxWords}`);
  }
  if (typeof maxDocumentBytes !== 'number' || !(maxDocumentBytes > 0) || !Number.isFinite(maxDocumentBytes)) {
    throw new RangeError(`maxDocumentBytes must be a positive number, got ${maxDocumentBytes}`);
  }
  const tokenBudget = options?.tokenBudget;
  if (tokenBudget !== undefined && (!Number.isInteger(tokenBudget.maxTokens) || tokenBudget.maxTokens < 1)) {
    throw new RangeError(`tokenBudget.maxTokens must be an integer >= 1, got ${tokenBudget.maxTokens}`);
  }
  return { maxWords, maxDocumentBytes, tokenBudget };
}

/**
 * A plain object: an object literal or `Object.create(null)` (graphql-js builds input objects so),
 * from any realm (jest and vm contexts have their own Object.prototype); not an array or class instance.
 */
const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Object.prototype.toString.call(v) !== '[object Object]') return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
};

/** Unicode that PostgreSQL text can store: no lone surrogates, no NUL. */
function checkString(document: string, field: string, value: string): void {
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    throw new IngestError(document, `invalid UTF-8 / malformed Unicode in ${field}`);
  }
  if (value.includes('\u0000')) throw new IngestError(document, `NUL character (\\u0000) in ${field}`);
}

/** Check every string of a JSON value (object keys included). */
function checkJsonStrings(document: string, field: string, value: unknown): void {
  if (typeof value === 'string') checkString(document, field, value);
  else if (Array.isArray(value)) value.forEach((v, i) => checkJsonStrings(document, `${field}[${i}]`, v));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      checkString(document, `${field} (a key)`, k);
      checkJsonStrings(document, `${field}.${k}`, v);
    }
  }
}

/** JSON with object keys sorted at every level: equal values always serialize the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();
/** Text keeps its paragraphs; only line endings and surrounding whitespace are normalized. */
const normalizeText = (s: string): string => s.replace(/\r\n?/g, '\n').trim();
const utf8Bytes = (s: string | undefined): number => (s ? Buffer.byteLength(s, 'utf8') : 0);

/** A passage the caller split itself, as checked. */
interface CheckedPassage {
  text: string;
  vector?: Float32Array;
}

/** A section as checked: the fields that matter, with their path for error messages. */
interface CheckedSection {
  path: string;
  title: unknown;
  text: string | undefined;
  /** The caller's own passages instead of text (bring your own vectors). */
  passages?: CheckedPassage[];
  sections: CheckedSection[];
}

/** A vector argument as a Float32Array; its shape and numbers checked (its dimension is the pipeline's, vectors.ts). */
function checkVector(document: string, path: string, value: unknown): Float32Array | undefined {
  if (value === undefined || value === null) return undefined;
  const problem = vectorProblem(value);
  if (problem) throw new IngestError(document, `${path} ${problem}`);
  return Float32Array.from(value as number[]);
}

/** The caller's passages: kept whole, each with its text and, optionally, its vector. */
function checkPassages(document: string, value: unknown, path: string): CheckedPassage[] {
  if (!Array.isArray(value)) throw new IngestError(document, `${path} must be an array`);
  return value.map((raw, j) => {
    const at = `${path}[${j}]`;
    if (!isPlainObject(raw)) throw new IngestError(document, `${at} must be an object`);
    const text = raw.text ?? undefined;
    if (typeof text !== 'string') throw new IngestError(document, `${at}.text must be a string`);
    checkString(document, `${at}.text`, text);
    if (!text.trim()) throw new IngestError(document, `${at}.text is empty`);
    return { text, vector: checkVector(document, `${at}.vector`, raw.vector) };
  });
}

/** Check a JSON title tree's shape and strings (titles are checked later, with the path). */
function checkSections(document: string, value: unknown, path: string): CheckedSection[] {
  if (!Array.isArray(value)) throw new IngestError(document, `${path} must be an array`);
  return value.map((raw, i) => {
    const at = `${path}[${i}]`;
    if (!isPlainObject(raw)) throw new IngestError(document, `${at} must be an object`);
    const title = raw.title ?? undefined;
    const text = raw.text ?? undefined;
    if (title !== undefined && typeof title !== 'string') throw new IngestError(document, `${at}.title must be a string`);
    if (text !== undefined && typeof text !== 'string') throw new IngestError(document, `${at}.text must be a string`);
    if (title !== undefined) checkString(document, `${at}.title`, title);
    if (text !== undefined) checkString(document, `${at}.text`, text);
    const passages = raw.passages == null ? undefined : checkPassages(document, raw.passages, `${at}.passages`);
    if (passages && text !== undefined) throw new IngestError(document, `${at} has both text and passages: give one`);
    const sections = raw.sections == null ? [] : checkSections(document, raw.sections, `${at}.sections`);
    return { path: at, title, text, passages, sections };
  });
}

function fromSectionInputs(sections: SectionInput[], path: string): CheckedSection[] {
  return sections.map((s, i) => ({
    path: `${path}[${i}]`,
    title: s.title,
    text: s.text,
    sections: fromSectionInputs(s.sections ?? [], `${path}[${i}].sections`),
  }));
}

function treeBytes(sections: CheckedSection[]): number {
  let n = 0;
  for (const s of sections) n += utf8Bytes(s.title as string | undefined) + utf8Bytes(s.text) + passageBytes(s.passages) + treeBytes(s.sections);
  return n;
}

const passageBytes = (passages: CheckedPassage[] | undefined): number => (passages ?? []).reduce((n, p) => n + utf8Bytes(p.text), 0);

const countSections = (sections: CheckedSection[]): number => sections.reduce((n, s) => n + 1 + countSections(s.sections), 0);

/**
 * A parsed source's abstract and sections cut to `budget` bytes of text, in reading order: what
 * fits is kept whole, the text that crosses the budget is cut at a word, and every section after it
 * is left out. `kept` and `total` count sections.
 */
function cutTree(abstract: string, sections: CheckedSection[], budget: number): { abstract: string; sections: CheckedSection[]; kept: number; total: number } {
  let left = Math.max(0, budget);
  let whole = true;
  let kept = 0;
  const take = (text: string): string => {
    const n = utf8Bytes(text);
    if (n <= left) {
      left -= n;
      return text;
    }
    whole = false;
    const head = cutText(text, left);
    left = 0;
    return head;
  };
  const walk = (list: CheckedSection[]): CheckedSection[] => {
    const out: CheckedSection[] = [];
    for (const s of list) {
      const titleBytes = utf8Bytes(s.title as string | undefined);
      if (!whole || titleBytes > left) {
        whole = false;
        break;
      }
      left -= titleBytes;
      const text = s.text === undefined ? undefined : take(s.text);
      kept++;
      out.push({ ...s, text, sections: whole ? walk(s.sections) : [] });
    }
    return out;
  };
  const head = take(abstract);
  return { abstract: head, sections: whole ? walk(sections) : [], kept, total: countSections(sections) };
}

/** The longest start of `text` within `bytes` UTF-8 bytes, ending before a whitespace when one is near the cut. */
function cutText(text: string, bytes: number): string {
  if (bytes <= 0) return '';
  const utf8 = Buffer.from(text, 'utf8');
  let end = bytes;
  // Not inside a character: back to the first byte of the one the cut falls in.
  while (end > 0 && (utf8[end] & 0xc0) === 0x80) end--;
  const head = utf8.subarray(0, end).toString('utf8');
  for (let i = head.length - 1; i >= Math.max(0, head.length - 200); i--) if (/\s/.test(head[i])) return head.slice(0, i);
  return head;
}

/** For the content hash: only the fields that make up the tree (a passage's text, not its vector). */
function hashableTree(sections: CheckedSection[]): unknown[] {
  return sections.map((s) => ({ title: s.title, text: s.text, passages: s.passages?.map((p) => p.text), sections: hashableTree(s.sections) }));
}

const STRING_FIELDS = ['key', 'title', 'abstract', 'source', ...SOURCE_FIELDS] as const;

/**
 * Validate `input` and flatten it into rows. Errors are IngestErrors naming the document by its
 * key, else its title, else `label` (e.g. `#3` or `file.jsonl:12`); bad options are RangeErrors.
 */
export function prepareDocument(input: DocumentInput, options?: Partial<IngestOptions>, label?: string): PreparedDocument {
  const { maxWords, maxDocumentBytes, tokenBudget } = resolveIngestOptions(options);
  const raw: unknown = input;
  const labelOf = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? squash(v) : undefined);
  if (!isPlainObject(raw)) throw new IngestError(label ?? 'document', 'a document must be a JSON object');
  const document = labelOf(raw.key) ?? labelOf(raw.title) ?? label ?? 'untitled document';

  // Shape: GraphQL and JSON callers send null for absent fields, so null counts as absent.
  const fields: Partial<Record<(typeof STRING_FIELDS)[number], string>> = {};
  for (const name of STRING_FIELDS) {
    const value = raw[name] ?? undefined;
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new IngestError(document, `${name} must be a string`);
    checkString(document, name, value);
    fields[name] = value;
  }
  const sectionsRaw = raw.sections ?? undefined;
  const passagesRaw = raw.passages ?? undefined;
  const metadataRaw = raw.metadata ?? undefined;
  // Bounded before anything below recurses into them.
  const maxSectionDepth = options?.maxSectionDepth ?? DEFAULT_MAX_SECTION_DEPTH;
  const maxMetadataDepth = options?.maxMetadataDepth ?? DEFAULT_MAX_METADATA_DEPTH;
  if (sectionsDeeperThan(sectionsRaw, maxSectionDepth)) {
    throw new IngestError(document, `sections are nested deeper than ${maxSectionDepth} levels (MAX_SECTION_DEPTH)`);
  }
  if (jsonDeeperThan(metadataRaw, maxMetadataDepth)) {
    throw new IngestError(document, `metadata is nested deeper than ${maxMetadataDepth} levels (MAX_METADATA_DEPTH)`);
  }
  if (metadataRaw !== undefined && !isPlainObject(metadataRaw)) {
    throw new IngestError(document, 'metadata must be a JSON object');
  }
  let metadata: Record<string, unknown> = {};
  if (metadataRaw !== undefined) {
    try {
      metadata = JSON.parse(JSON.stringify(metadataRaw)) as Record<string, unknown>;
    } catch (e) {
      throw new IngestError(document, `metadata is not JSON: ${(e as Error).message}`);
    }
    checkJsonStrings(document, 'metadata', metadata);
  }
  if (fields.key !== undefined && !fields.key.trim()) throw new IngestError(document, 'key must be a non-empty string');

  // Exactly one content form.
  const sourceFields = SOURCE_FIELDS.filter((f) => fields[f] !== undefined);
  const tree = fields.abstract !== undefined || sectionsRaw !== undefined || passagesRaw !== undefined;
  const forms = [...(tree ? ['abstract/sections'] : []), ...sourceFields];
  if (forms.length > 1) {
    throw new IngestError(
      document,
      `conflicting content: give only one of abstract/sections, ${SOURCE_FIELDS.slice(0, -1).join(', ')} or ${SOURCE_FIELDS.at(-1)} (got ${forms.join(' and ')})`,
    );
  }
  const treeSections = sectionsRaw === undefined ? [] : checkSections(document, sectionsRaw, 'sections');
  const abstractPassages = passagesRaw === undefined ? undefined : checkPassages(document, passagesRaw, 'passages');
  if (abstractPassages && fields.abstract !== undefined) throw new IngestError(document, 'give abstract or passages (the abstract as passages), not both');
  const vector = checkVector(document, 'vector', raw.vector);

  // A source is bounded by its markup before it is parsed, and by its text after (below).
  const sourceField = sourceFields[0];
  if (sourceField !== undefined) {
    const markup = utf8Bytes(fields[sourceField]);
    const limit = sourceBytesLimit(maxDocumentBytes);
    if (markup > limit) {
      throw new IngestError(
        document,
        `${sourceField} is ${markup} bytes, over the limit of ${limit} bytes for a document's source (${SOURCE_BYTES_PER_DOCUMENT_BYTE} × MAX_DOCUMENT_BYTES)`,
      );
    }
  }
  const metadataBytes = metadataRaw === undefined ? 0 : utf8Bytes(JSON.stringify(metadata));
  const bytes = utf8Bytes(fields.title) + utf8Bytes(fields.abstract) + treeBytes(treeSections) + passageBytes(abstractPassages) + metadataBytes;
  if (bytes > maxDocumentBytes) {
    throw new IngestError(document, `document is ${bytes} bytes, over the limit of ${maxDocumentBytes} bytes`);
  }

  // Resolve the title tree.
  let title: string;
  let abstractRaw: string;
  let sections: CheckedSection[];
  let warnings: string[] = [];
  /** Set when a source's text was cut to maxDocumentBytes (part of the content hash: another limit cuts elsewhere). */
  let cutAt: number | undefined;
  if (sourceField !== undefined) {
    const parsed: ParsedTree = SOURCE_FORMATS[sourceField].parse(fields[sourceField]!, { title: fields.title, key: fields.key, label: document });
    warnings = parsed.warnings ?? [];
    title = squash(parsed.title);
    abstractRaw = parsed.abstract;
    sections = fromSectionInputs(parsed.sections, 'sections');
    // A page is ingested up to the limit rather than refused whole: what it stores is bounded all the same.
    const textBytes = utf8Bytes(title) + utf8Bytes(abstractRaw) + treeBytes(sections) + metadataBytes;
    if (textBytes > maxDocumentBytes) {
      const cut = cutTree(abstractRaw, sections, maxDocumentBytes - utf8Bytes(title) - metadataBytes);
      abstractRaw = cut.abstract;
      sections = cut.sections;
      cutAt = maxDocumentBytes;
      warnings = [
        ...warnings,
        `its text is ${textBytes} bytes, over the limit of ${maxDocumentBytes} bytes (MAX_DOCUMENT_BYTES): ingested up to the limit, ` +
          `${cut.total - cut.kept} of its ${cut.total} sections left out`,
      ];
    }
  } else {
    title = squash(fields.title ?? '');
    abstractRaw = fields.abstract ?? '';
    sections = treeSections;
  }
  if (!title) throw new IngestError(document, 'missing title');
  const key = fields.key ?? title;

  // Flatten sections in pre-order; each keeps its own text for splitting below.
  const preparedSections: PreparedSection[] = [];
  const sectionTexts: string[] = [];
  const sectionPassages: (CheckedPassage[] | undefined)[] = [];
  const visit = (list: CheckedSection[], parent: PreparedSection | null): void => {
    list.forEach((s, ordinal) => {
      const sectionTitle = typeof s.title === 'string' ? squash(s.title) : '';
      if (!sectionTitle) throw new IngestError(document, `section without a title at ${s.path}`);
      const row: PreparedSection = {
        position: preparedSections.length,
        parentPosition: parent ? parent.position : null,
        title: sectionTitle,
        depth: parent ? parent.depth + 1 : 1,
        ordinal,
        titlePath: [...(parent ? parent.titlePath : [title]), sectionTitle],
      };
      preparedSections.push(row);
      sectionTexts.push(s.text ?? '');
      sectionPassages.push(s.passages);
      visit(s.sections, row);
    });
  };
  visit(sections, null);

  // Passages: abstract first, then each section's own text, never mixing two texts.
  const passages: PreparedPassage[] = [];
  let hasCode = false;
  const addPassages = (rawText: string, sectionPosition: number | null, titlePath: string[]): string => {
    const { text, links } = extractLinks(normalizeText(rawText));
    // A title path that eats most of the budget still leaves passages half a budget of text (they are
    // then clipped a little) rather than one word each.
    const limit =
      tokenBudget && Math.max(tokenBudget.maxTokens, tokenBudget.count(passageEncodingText({ titlePath, text: '' })) + Math.ceil(tokenBudget.maxTokens / 2));
    const fits = tokenBudget && ((block: string) => tokenBudget.count(passageEncodingText({ titlePath, text: block })) <= limit!);
    hasCode ||= findFences(text).length > 0;
    const blocks = splitPassages(text, maxWords, fits);
    const first = passages.length;
    for (const block of blocks) {
      passages.push({ ordinal: passages.length, sectionPosition, text: block.text, titlePath: [...titlePath], wordCount: block.wordCount, links: [] });
    }
    for (const link of links) {
      // The passage holding the anchor's start; an anchor starting in the whitespace between
      // passages belongs to the one before it (or the first).
      let b = blocks.length - 1;
      while (b > 0 && blocks[b].start > link.start) b--;
      if (b >= 0) passages[first + b].links.push({ target: link.target, anchorText: link.anchorText });
    }
    return stripFences(text).trim();
  };
  // The caller's own passages are kept whole: their boundaries (and vectors) are the caller's.
  const addGiven = (given: CheckedPassage[], sectionPosition: number | null, titlePath: string[]): string => {
    const texts: string[] = [];
    for (const p of given) {
      const { text, links } = extractLinks(normalizeText(p.text));
      const wordCount = text.split(/\s+/).filter(Boolean).length;
      passages.push({
        ordinal: passages.length,
        sectionPosition,
        text,
        titlePath: [...titlePath],
        wordCount,
        links: links.map((l) => ({ target: l.target, anchorText: l.anchorText })),
        ...(p.vector ? { vector: p.vector } : {}),
      });
      texts.push(text);
    }
    return texts.join('\n\n');
  };
  const abstract = abstractPassages ? addGiven(abstractPassages, null, [title]) : addPassages(abstractRaw, null, [title]);
  preparedSections.forEach((s, i) => {
    const given = sectionPassages[i];
    if (given) addGiven(given, s.position, s.titlePath);
    else addPassages(sectionTexts[i], s.position, s.titlePath);
  });
  if (passages.length === 0) throw new IngestError(document, 'empty document: no text in abstract or sections');

  const contentHash = createHash('sha256')
    .update(
      canonicalJson({
        v: 1,
        key,
        title,
        abstract: fields.abstract,
        sections: sectionsRaw === undefined ? undefined : hashableTree(treeSections),
        passages: abstractPassages?.map((p) => p.text),
        ...Object.fromEntries(SOURCE_FIELDS.map((f) => [f, fields[f]])),
        source: fields.source,
        metadata,
        maxWords,
        ...(tokenBudget ? { tokens: tokenBudget.id } : {}),
        // Code blocks are kept whole, which changed how such documents split: a document holding one re-splits on
        // re-ingest; the hash of a document without code is what it was.
        ...(hasCode ? { code: 1 } : {}),
        ...(cutAt !== undefined ? { cutAt } : {}),
      }),
    )
    .digest('hex');

  return {
    key,
    title,
    abstract,
    summary: documentSummary(
      title,
      abstract,
      preparedSections.map((s) => s.title),
    ),
    source: fields.source ?? null,
    metadata,
    contentHash,
    sections: preparedSections,
    passages,
    ...(vector ? { vector } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
}
