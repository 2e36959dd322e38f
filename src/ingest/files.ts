/**
 * Files and directories → DocumentInputs, one item at a time. A bad file (or a bad JSONL line)
 * becomes an error item naming where it came from, and reading goes on: a bulk import reports
 * every failure instead of stopping at the first. Directories are walked lazily, in sorted order,
 * so runs are reproducible and memory stays flat.
 */
import { createReadStream } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { decodeSource } from './charset';
import { IngestError } from './errors';
import { FILE_EXTENSIONS, formatOfExtension, type SourceFormat } from './formats';
import { DEFAULT_INGEST_OPTIONS, SOURCE_BYTES_PER_DOCUMENT_BYTE, sourceBytesLimit, type DocumentInput } from './types';

export interface InputItem {
  /** Where the item came from: a file, `file.jsonl:LINE` or `file.json#INDEX`. */
  origin: string;
  input?: DocumentInput;
  error?: IngestError;
}

export interface ReadInputOptions {
  /**
   * The ingest's MAX_DOCUMENT_BYTES (default DEFAULT_INGEST_OPTIONS.maxDocumentBytes): a
   * one-document file (Markdown, HTML, reST, text) may be its source's limit, sourceBytesLimit.
   */
  maxDocumentBytes?: number;
  /** Largest .json file (and JSONL line), in bytes; default 64 MiB. */
  maxFileBytes?: number;
}

export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;

const isSupported = (file: string): boolean => formatOfExtension(path.extname(file)) !== null;

const fail = (origin: string, problem: string): InputItem => ({ origin, error: new IngestError(origin, problem) });
/** An error's message; fs errors may come from another realm (jest), so no instanceof. */
const messageOf = (e: unknown): string => {
  const message = (e as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(e);
};

/** Strict UTF-8: invalid bytes are an error, not U+FFFD in the stored text. */
function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Key of a one-document file: its path below the root, with `/`, without its extension unless a
 * sibling of another format shares its name (`a.md` and `a.html`): dropping both extensions would
 * give them one key, and the second file would replace the first.
 */
function keyOf(file: string, root: string, keepExtension = false): string {
  const rel = path.relative(root, file);
  const kept = keepExtension ? rel : rel.slice(0, rel.length - path.extname(rel).length);
  return kept.split(path.sep).join('/');
}

const stemOf = (name: string): string => name.slice(0, name.length - path.extname(name).length);

/** Names of one-document files in a folder whose stem another one-document file shares. */
function clashingNames(names: readonly string[]): Set<string> {
  const byStem = new Map<string, string[]>();
  for (const name of names) {
    const format = formatOfExtension(path.extname(name));
    if (format === null || !('source' in format)) continue;
    const stem = stemOf(name);
    byStem.set(stem, [...(byStem.get(stem) ?? []), name]);
  }
  return new Set([...byStem.values()].filter((group) => group.length > 1).flat());
}

/** Read a whole file after checking its size (UTF-8, or the encoding its format reads it in otherwise); an error item when it can't be. */
async function readSmallFile(
  file: string,
  limit: number,
  charsetOf?: SourceFormat['charsetOf'],
  limitName = '',
): Promise<{ text?: string; error?: InputItem }> {
  try {
    const { size } = await stat(file);
    if (size > limit) return { error: fail(file, `file is ${size} bytes, over the limit of ${limit} bytes${limitName}`) };
    const text = decodeSource(await readFile(file), charsetOf);
    return text === null ? { error: fail(file, 'invalid UTF-8') } : { text };
  } catch (e) {
    return { error: fail(file, `cannot read file: ${messageOf(e)}`) };
  }
}

async function* readJson(file: string, limit: number): AsyncGenerator<InputItem> {
  const { text, error } = await readSmallFile(file, limit);
  if (error) return yield error;
  let value: unknown;
  try {
    value = JSON.parse(text!);
  } catch (e) {
    return yield fail(file, `invalid JSON: ${messageOf(e)}`);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const origin = `${file}#${i}`;
      yield isPlainObject(value[i]) ? { origin, input: value[i] as DocumentInput } : fail(origin, 'expected a JSON object');
    }
  } else if (isPlainObject(value)) {
    yield { origin: file, input: value as DocumentInput };
  } else {
    yield fail(file, 'expected a JSON object or an array of objects');
  }
}

/** Lines of a file as raw bytes, streamed; a line longer than `limit` comes back as null. */
async function* byteLines(file: string, limit: number): AsyncGenerator<Buffer | null> {
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  const take = (): Buffer | null => {
    const line = tooLong ? null : Buffer.concat(parts, length);
    parts = [];
    length = 0;
    tooLong = false;
    return line;
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
      if (!tooLong) parts.push(chunk.subarray(from, nl));
      length += nl - from;
      if (length > limit) tooLong = true;
      yield take();
      from = nl + 1;
    }
    length += chunk.length - from;
    if (length > limit) tooLong = true;
    if (!tooLong) parts.push(chunk.subarray(from));
  }
  if (length > 0 || tooLong) yield take();
}

async function* readJsonLines(file: string, limit: number): AsyncGenerator<InputItem> {
  let lineNo = 0;
  try {
    for await (const bytes of byteLines(file, limit)) {
      const origin = `${file}:${++lineNo}`;
      if (bytes === null) {
        yield fail(origin, `line is over the limit of ${limit} bytes`);
        continue;
      }
      const line = decodeUtf8(bytes);
      if (line === null) {
        yield fail(origin, 'invalid UTF-8');
        continue;
      }
      if (!line.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (e) {
        yield fail(origin, `invalid JSON: ${messageOf(e)}`);
        continue;
      }
      yield isPlainObject(value) ? { origin, input: value as DocumentInput } : fail(origin, 'expected a JSON object');
    }
  } catch (e) {
    yield fail(lineNo > 0 ? `${file}:${lineNo}` : file, `cannot read file: ${messageOf(e)}`);
  }
}

/** A one-document file, read as its format's DocumentInput field, keyed by its path. */
async function readSource(format: SourceFormat, file: string, root: string, limit: number, keepExtension: boolean): Promise<InputItem> {
  const { text, error } = await readSmallFile(
    file,
    sourceBytesLimit(limit),
    format.charsetOf,
    ` for a document's source (${SOURCE_BYTES_PER_DOCUMENT_BYTE} × MAX_DOCUMENT_BYTES)`,
  );
  if (error) return error;
  try {
    return { origin: file, input: { key: keyOf(file, root, keepExtension), ...format.fromFile(text!, path.basename(file, path.extname(file))) } };
  } catch (e) {
    // A file its parser refuses (HTML nested too deeply…) fails alone; the walk goes on.
    return fail(file, e instanceof IngestError ? e.problem : `cannot parse: ${messageOf(e)}`);
  }
}

interface Limits {
  document: number;
  file: number;
}

async function* readOne(file: string, root: string, limits: Limits, keepExtension = false): AsyncGenerator<InputItem> {
  const format = formatOfExtension(path.extname(file));
  if (format === null) return;
  if ('source' in format) yield await readSource(format.source, file, root, limits.document, keepExtension);
  else if (format.documents.lines) yield* readJsonLines(file, limits.file);
  else yield* readJson(file, limits.file);
}

/** Walk `dir` depth-first in sorted name order; hidden entries are skipped, symlink loops too. */
async function* walk(dir: string, root: string, limits: Limits, seen: Set<string>): AsyncGenerator<InputItem> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    return yield fail(dir, `cannot read directory: ${messageOf(e)}`);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const clashing = clashingNames(entries.filter((e) => !e.name.startsWith('.') && !e.isDirectory()).map((e) => e.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      try {
        const target = await stat(full);
        isDir = target.isDirectory();
        isFile = target.isFile();
      } catch {
        continue; // a dangling link is no input
      }
    }
    if (isDir) {
      const real = await realpath(full);
      if (seen.has(real)) continue;
      seen.add(real);
      yield* walk(full, root, limits, seen);
    } else if (isFile && isSupported(full)) {
      yield* readOne(full, root, limits, clashing.has(entry.name));
    }
  }
}

/**
 * Read documents from files and directories (recursively, sorted), each by the format its
 * extension names (formats.ts): `.json`, `.jsonl`, Markdown, HTML, reST, text. Files of other
 * types are skipped in directories and reported when named directly.
 */
export async function* readInputFiles(paths: string[], opts?: ReadInputOptions): AsyncGenerator<InputItem> {
  const limits: Limits = {
    document: opts?.maxDocumentBytes ?? DEFAULT_INGEST_OPTIONS.maxDocumentBytes,
    file: opts?.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  };
  // Files named directly are keyed below their own folder: two of them can clash as siblings do.
  const clashingGiven = clashingNames(paths.map((p) => path.resolve(p)));
  for (const given of paths) {
    let info;
    try {
      info = await stat(given);
    } catch (e) {
      yield fail(given, `cannot read: ${messageOf(e)}`);
      continue;
    }
    if (info.isDirectory()) {
      yield* walk(given, given, limits, new Set([await realpath(given)]));
    } else if (!isSupported(given)) {
      yield fail(given, `unsupported file type "${path.extname(given)}" (use ${FILE_EXTENSIONS.join(', ')})`);
    } else {
      yield* readOne(given, path.dirname(given), limits, clashingGiven.has(path.resolve(given)));
    }
  }
}
