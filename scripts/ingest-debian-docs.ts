/**
 * Every Markdown, HTML and reST file of this machine's Debian documentation, through the product's
 * ingest: each file read as `dhr ingest` reads its format (formats.ts's fromFile; gzipped ones, as
 * Debian ships many, gunzipped; Sphinx's `_sources/*.rst.txt` as reST), then written by the real
 * pipeline (`ingest`, the bulk path, no embedding) into a throwaway PGlite store, a batch at a time.
 * Prints files tried, ingested, refused with the reasons grouped (and an example of each), and the
 * warnings by kind.
 *
 *   npx tsx scripts/ingest-debian-docs.ts [root (default /usr/share/doc)] [--prepare-only] [--batch N] [--json FILE]
 *
 * --prepare-only stops at prepareDocument (no store). The ingest settings are the server's, from the
 * environment (MAX_DOCUMENT_BYTES…). Exits 1 when under 99.9 % of the files that hold a document ingest.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { messageOf } from '../src/errors';
import { decodeSource } from '../src/ingest/charset';
import { SOURCE_FORMATS, type SourceFormat } from '../src/ingest/formats';
import { IngestError } from '../src/ingest/errors';
import { prepareDocument } from '../src/ingest/prepare';
import type { DocumentInput } from '../src/ingest/types';
import { loadConfig } from '../src/config';
import { ingest } from '../src/pipeline/ingest';
import { PgliteDatabase } from '../src/store/pglite';
import { migrate } from '../src/store/migrate';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const root = args.find((a, i) => !a.startsWith('--') && !['--batch', '--json'].includes(args[i - 1] ?? '')) ?? '/usr/share/doc';
const batchSize = Number(option('--batch') ?? 200);
// The server's ingest settings from the environment (MAX_DOCUMENT_BYTES, default 2 MB; MAX_WORDS…).
const INGEST_OPTIONS = loadConfig(process.env).ingest;
/** Refusals of files that hold no document: nothing to ingest, whatever the parser. */
const NOT_A_DOCUMENT = /^(empty document|binary)/;

/** The formats read, by the name's ending (after a `.gz` is taken off); Sphinx ships its reST sources as `.rst.txt`. */
const ENDINGS: [string, SourceFormat][] = [
  ['.rst.txt', SOURCE_FORMATS.rst],
  ...(['markdown', 'html', 'rst'] as const).flatMap((f) => SOURCE_FORMATS[f].extensions.map((e): [string, SourceFormat] => [e, SOURCE_FORMATS[f]])),
];

function formatOf(name: string): { format: SourceFormat; stem: string; gz: boolean } | null {
  const lower = name.toLowerCase();
  const gz = lower.endsWith('.gz');
  const bare = gz ? lower.slice(0, -3) : lower;
  const found = ENDINGS.find(([ending]) => bare.endsWith(ending));
  return found ? { format: found[1], stem: name.slice(0, bare.length - found[0].length), gz } : null;
}

function* walk(dir: string): Generator<string> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = join(dir, e.name);
    if (e.isDirectory()) yield* walk(full);
    else if ((e.isFile() || (e.isSymbolicLink() && statSync(full, { throwIfNoEntry: false })?.isFile())) && formatOf(e.name)) yield full;
  }
}

/** A file's text, or why it is no document (a refusal's reason, grouped by it). */
function read(file: string, format: SourceFormat, gz: boolean): { text: string } | { refused: string } {
  let bytes: Buffer = readFileSync(file);
  if (gz) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      return { refused: `not gzip: ${messageOf(e)}` };
    }
  }
  if (bytes.includes(0)) return { refused: 'binary (NUL bytes)' };
  // As the file walker reads it (files.ts): UTF-8, else HTML's declared encoding or windows-1252.
  const text = decodeSource(bytes, format.charsetOf);
  return text === null ? { refused: 'invalid UTF-8' } : { text };
}

/** A reason without what is particular to one file (its name, a line, a size), to group by. */
const reasonOf = (message: string) =>
  message
    .replace(/^document "[^"]*": /, '')
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, 'N');

async function main(): Promise<void> {
  const started = Date.now();
  const files = [...walk(root)];
  const refused = new Map<string, string[]>();
  const warnings = new Map<string, number>();
  let ingested = 0;
  let warned = 0;
  let passages = 0;
  const refuse = (file: string, reason: string) => refused.set(reason, [...(refused.get(reason) ?? []), relative(root, file)]);

  // Read and prepared here first: a file refused before the store names its reason the same way the store's ingest does.
  const pending: { file: string; input: DocumentInput }[] = [];
  for (const file of files) {
    const { format, stem, gz } = formatOf(basename(file))!;
    const read_ = read(file, format, gz);
    if ('refused' in read_) {
      refuse(file, read_.refused);
      continue;
    }
    try {
      const input = { key: relative(root, file), ...format.fromFile(read_.text, stem) };
      prepareDocument(input, INGEST_OPTIONS, file);
      pending.push({ file, input });
    } catch (e) {
      refuse(file, reasonOf(e instanceof IngestError ? e.problem : messageOf(e)));
    }
  }

  const count = (w: readonly string[]) => {
    if (w.length > 0) warned++;
    for (const one of w) warnings.set(reasonOf(one), (warnings.get(reasonOf(one)) ?? 0) + 1);
  };
  if (flag('--prepare-only')) {
    for (const { file, input } of pending) {
      const doc = prepareDocument(input, INGEST_OPTIONS, file);
      ingested++;
      passages += doc.passages.length;
      count(doc.warnings ?? []);
    }
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-debian-docs-'));
    const db = await PgliteDatabase.open({ dataDir: dir });
    try {
      await migrate(db);
      for (let from = 0; from < pending.length; from += batchSize) {
        const batch = pending.slice(from, from + batchSize);
        const result = await ingest(
          db,
          batch.map((p) => p.input),
          { ...INGEST_OPTIONS, labelOf: (i) => batch[i].file },
        );
        for (const o of result.outcomes) {
          if (o.status === 'failed') refuse(batch[o.index].file, reasonOf(o.message ?? 'failed'));
          else {
            ingested++;
            passages += o.passages;
            count(o.warnings);
          }
        }
        process.stderr.write(`\r${Math.min(from + batchSize, pending.length)}/${pending.length} written`);
      }
      process.stderr.write('\n');
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const byFormat = new Map<string, number>();
  for (const f of files) {
    const { format, gz } = formatOf(basename(f))!;
    const name = `${format.field}${gz ? ' (gz)' : ''}`;
    byFormat.set(name, (byFormat.get(name) ?? 0) + 1);
  }
  const share = (100 * ingested) / Math.max(1, files.length);
  console.log(`root: ${root}${flag('--prepare-only') ? ' (prepareDocument only)' : ' (ingest into a throwaway PGlite store)'}`);
  console.log(`files tried: ${files.length} (${[...byFormat].map(([k, n]) => `${k} ${n}`).join(', ')})`);
  console.log(`ingested: ${ingested} (${share.toFixed(2)} %), ${passages} passages; with warnings: ${warned}`);
  const nonDocuments = [...refused].filter(([reason]) => NOT_A_DOCUMENT.test(reason)).reduce((n, [, list]) => n + list.length, 0);
  const documents = files.length - nonDocuments;
  console.log(
    `of the ${documents} files that hold a document (not empty, not binary): ${ingested} ingested (${((100 * ingested) / Math.max(1, documents)).toFixed(2)} %)`,
  );
  console.log(`refused: ${files.length - ingested}`);
  for (const [reason, list] of [...refused].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`  ${list.length}  ${reason}  (e.g. ${list[0]})`);
  }
  if (warnings.size > 0) console.log('warnings:');
  for (const [reason, n] of [...warnings].sort((a, b) => b[1] - a[1])) console.log(`  ${n}  ${reason}`);
  console.log(`seconds: ${((Date.now() - started) / 1000).toFixed(1)}`);
  const json = option('--json');
  if (json)
    writeFileSync(
      json,
      JSON.stringify({ root, tried: files.length, ingested, passages, refused: Object.fromEntries(refused), warnings: Object.fromEntries(warnings) }, null, 2),
    );
  process.exitCode = ingested >= 0.999 * documents ? 0 : 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 2;
});
