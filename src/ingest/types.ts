/**
 * The ingest contract: what callers give (DocumentInput, a JSON title tree or Markdown/plain text)
 * and what the store writes (PreparedDocument, the title tree flattened into rows).
 */

/**
 * A passage as the caller splits it (bring your own vectors): kept whole, never split, with the
 * vector of the external passage model when one is given (src/ingest/vectors.ts checks them).
 */
export interface PassageInput {
  text: string;
  vector?: readonly number[];
}

/** A section of a JSON title tree, as a caller writes it: its own text, or its passages (not both). */
export interface SectionInput {
  title: string;
  text?: string;
  passages?: PassageInput[];
  sections?: SectionInput[];
}

/**
 * The fields of DocumentInput that carry a document's source in one format (formats.ts has one
 * entry per field: its parser, its file extensions).
 */
export type SourceField = 'markdown' | 'html' | 'rst' | 'text';

/**
 * One document as a caller gives it. Exactly one of `sections`/`abstract` (the JSON title tree)
 * or a source field (`markdown`, `html`, `rst`, `text`) carries the content; `title` may come
 * from the source (a leading `# H1`, `<title>`…) when absent.
 */
export interface DocumentInput extends Partial<Record<SourceField, string>> {
  key?: string;
  title?: string;
  abstract?: string;
  sections?: SectionInput[];
  /** The abstract as the caller's own passages (instead of `abstract`). */
  passages?: PassageInput[];
  /** The document's (summary) vector for the external document model. */
  vector?: readonly number[];
  source?: string;
  metadata?: Record<string, unknown>;
}

/** A source parsed into a title tree: the text before the first section is the abstract. */
export interface ParsedTree {
  title: string;
  abstract: string;
  sections: SectionInput[];
  /** What the parser read other than as written (a heading without text, merged or titled by its source); absent when nothing. */
  warnings?: string[];
}

export interface IngestOptions {
  /** Largest passage, in words (DHR: 100). */
  maxWords: number;
  /**
   * Largest document, in UTF-8 bytes of the text it stores (title, abstract, sections, metadata).
   * A source's markup is bounded apart (sourceBytesLimit); a source whose text is over this is
   * ingested up to it, with a warning; a JSON title tree over it is refused.
   */
  maxDocumentBytes: number;
  /** When set, passages are also split to fit the passage encoder's token budget. */
  tokenBudget?: TokenBudget;
  /** Deepest section nesting of a JSON title tree (default DEFAULT_MAX_SECTION_DEPTH, 64). */
  maxSectionDepth?: number;
  /** Deepest nesting of a document's metadata JSON (default DEFAULT_MAX_METADATA_DEPTH, 32). */
  maxMetadataDepth?: number;
}

/**
 * The passage encoder's budget, as ingest sees it: how many tokens it reads and how to count them
 * for the text it is given (title path + text, see `passageEncodingText`). `id` names the
 * tokenizer and budget, so a change of either changes the content hash and re-splits on re-ingest.
 */
export interface TokenBudget {
  id: string;
  maxTokens: number;
  count(text: string): number;
}

export const DEFAULT_INGEST_OPTIONS: IngestOptions = { maxWords: 100, maxDocumentBytes: 2_000_000 };

/**
 * A source field (markdown, html, rst, text) may be this many times maxDocumentBytes: the limit
 * bounds the text a document stores, and a page's markup is mostly tags (Node.js's api/all.html:
 * 8.4 MB of HTML, 4.1 MB of text). Beyond it the source is refused before it is parsed.
 */
export const SOURCE_BYTES_PER_DOCUMENT_BYTE = 8;

/** Largest source field (and one-document file), in bytes, for a maxDocumentBytes. */
export function sourceBytesLimit(maxDocumentBytes: number): number {
  return SOURCE_BYTES_PER_DOCUMENT_BYTE * maxDocumentBytes;
}

/** A section row: the tree flattened in pre-order. */
export interface PreparedSection {
  /** Index of this section in pre-order (0-based) within the document. */
  position: number;
  /** Pre-order index of the parent section, or null at top level. */
  parentPosition: number | null;
  title: string;
  /** 1 for top-level sections. */
  depth: number;
  /** Position among its siblings (0-based). */
  ordinal: number;
  /** Document title, then the titles of the ancestors, then this section's title. */
  titlePath: string[];
}

export interface PreparedLink {
  /** Target as written: a document key or title, or a URL. */
  target: string;
  anchorText: string;
}

export interface PreparedPassage {
  /** Reading order within the whole document (0-based): abstract passages first, then sections in pre-order. */
  ordinal: number;
  /** Pre-order position of the section, or null for abstract passages. */
  sectionPosition: number | null;
  /** Passage text with link markup replaced by its anchor text. */
  text: string;
  /** Document title, then section titles down to the passage's section. */
  titlePath: string[];
  wordCount: number;
  links: PreparedLink[];
  /** The caller's vector for it (an external passage model); not part of the content hash. */
  vector?: Float32Array;
}

export interface PreparedDocument {
  key: string;
  title: string;
  abstract: string;
  /** The text DHR embeds for the document: "title, abstract, toc". */
  summary: string;
  source: string | null;
  metadata: Record<string, unknown>;
  /** sha256 hex over the normalized content and the splitting options. */
  contentHash: string;
  sections: PreparedSection[];
  passages: PreparedPassage[];
  /** The caller's document vector (an external document model); not part of the content hash. */
  vector?: Float32Array;
  /** What its source's parser read other than as written (ParsedTree.warnings); absent when nothing. */
  warnings?: string[];
}
