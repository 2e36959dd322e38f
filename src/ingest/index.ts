/** Public API of the ingest pipeline: pure functions from caller input to store-ready rows. */
export * from './types';
export { IngestError } from './errors';
export { splitPassages, splitSentences, type TextBlock } from './splitter';
export { extractLinks, type ExtractedLink, type LinkExtraction } from './links';
export { parseMarkdown, findMarkdownTitle, type ParsedMarkdown } from './markdown';
export { parseRst, rstInline, type ParsedRst, type RstOptions, type RstTarget } from './rst';
export { documentSummary, passageEncodingText } from './summary';
export { prepareDocument, resolveIngestOptions } from './prepare';
export { readInputFiles, DEFAULT_MAX_FILE_BYTES, type InputItem, type ReadInputOptions } from './files';
export { factbookDir, factbookToDocument, readFactbook, cleanFactbookText } from './factbook';
