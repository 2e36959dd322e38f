import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GraphQLInputObjectType } from 'graphql';
import { buildProgram } from '../src/cli/program';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { readInputFiles, type InputItem } from '../src/ingest/files';
import { DOCUMENT_FILE_FORMATS, FILE_EXTENSIONS, SOURCE_FIELDS, SOURCE_FORMATS } from '../src/ingest/formats';
import { prepareDocument } from '../src/ingest/prepare';
import type { SourceField } from '../src/ingest/types';
import { packageRoot } from '../src/paths';
import { createTestApi, dataOf } from './helpers/api';

/** A small document in each format, with the title "Doc" and one section "Part". */
const SAMPLES: Record<SourceField, string> = {
  markdown: '# Doc\n\n## Part\n\nWords.\n',
  html: '<title>Doc</title><h1>Doc</h1><h2>Part</h2><p>Words.</p>',
  rst: 'Doc\n===\n\nPart\n----\n\nWords.\n',
  text: 'Doc\nWords.\n',
};

/**
 * The table of formats is the one place a format is defined: the file walker, prepareDocument,
 * the GraphQL DocumentInput, the CLI's help and docs/ingest.md all follow it.
 */
describe('the table of ingest formats', () => {
  it('is the GraphQL DocumentInput: one String field per source field, with the same description', async () => {
    const schema = await buildGraphQLSchema();
    const input = schema.getType('DocumentInput') as GraphQLInputObjectType;
    expect(input).toBeInstanceOf(GraphQLInputObjectType);
    const fields = input.getFields();
    for (const field of SOURCE_FIELDS) {
      expect(String(fields[field]?.type)).toBe('String');
      expect(fields[field].description).toBe(SOURCE_FORMATS[field].description);
    }
    // besides the formats: the JSON title tree, and the client's own passages and vector (bring your own vectors)
    expect(Object.keys(fields).sort()).toEqual(['abstract', 'key', 'metadata', 'passages', 'sections', 'source', 'title', 'vector', ...SOURCE_FIELDS].sort());
  });

  it('is what prepareDocument parses: each field alone gives its title tree, two together are refused naming both', () => {
    for (const field of SOURCE_FIELDS) {
      const doc = prepareDocument({ [field]: SAMPLES[field], ...(field === 'text' ? { title: 'Doc', text: 'Words.' } : {}) });
      expect(doc.title).toBe('Doc');
      if (field !== 'text') expect(doc.sections.map((s) => s.title)).toEqual(['Part']);
      expect(doc.passages.map((p) => p.text)).toEqual(['Words.']);
    }
    expect(() => prepareDocument({ html: SAMPLES.html, rst: SAMPLES.rst })).toThrow(/conflicting content: .* \(got html and rst\)/);
  });

  it('is what the file walker reads: every extension, into its field, titled by the file name when the source has no title', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-formats-'));
    try {
      const expected: Array<[string, SourceField]> = [];
      for (const [name, format] of Object.entries(SOURCE_FORMATS)) {
        for (const ext of format.extensions) {
          writeFileSync(join(dir, `${name}${ext}`), SAMPLES[format.field]);
          writeFileSync(join(dir, `untitled-${name}${ext.toUpperCase()}`), 'Just words.\n');
          expected.push([`${name}${ext}`, format.field]);
        }
      }
      for (const format of Object.values(DOCUMENT_FILE_FORMATS)) {
        for (const ext of format.extensions) writeFileSync(join(dir, `docs${ext}`), JSON.stringify({ title: 'J', abstract: 'x' }) + '\n');
      }
      writeFileSync(join(dir, 'other.pdf'), 'not read');
      const items: InputItem[] = [];
      for await (const item of readInputFiles([dir])) items.push(item);
      expect(items.filter((i) => i.error)).toEqual([]);
      const read = new Map(items.map((i) => [i.origin.slice(dir.length + 1), i.input!]));
      expect(read.size).toBe(FILE_EXTENSIONS.length + Object.values(SOURCE_FORMATS).flatMap((f) => f.extensions).length);
      for (const [file, field] of expected) {
        const input = read.get(file)!;
        expect(input[field]).toBe(field === 'text' ? 'Words.\n' : SAMPLES[field]);
        expect(prepareDocument(input).title).toBe('Doc');
      }
      for (const field of SOURCE_FIELDS.filter((f) => f !== 'text')) {
        const ext = SOURCE_FORMATS[field].extensions[0];
        expect(read.get(`untitled-${field}${ext.toUpperCase()}`)!.title).toBe(`untitled-${field}`);
      }
      const [unsupported] = await (async () => {
        const out: InputItem[] = [];
        for await (const item of readInputFiles([join(dir, 'other.pdf')])) out.push(item);
        return out;
      })();
      expect(unsupported.error!.problem).toBe(`unsupported file type ".pdf" (use ${FILE_EXTENSIONS.join(', ')})`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is what the ingestDocuments mutation takes: a document in each field, a bad one failing alone', async () => {
    const api = await createTestApi();
    try {
      const documents = [
        ...SOURCE_FIELDS.map((field) => ({ key: field, [field]: SAMPLES[field], ...(field === 'text' ? { title: 'Doc', text: 'Words.' } : {}) })),
        { key: 'untitled', html: '<p>No title anywhere.</p>' },
      ];
      const result = dataOf(
        await api.exec(`mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed outcomes { key status message } } }`, {
          docs: documents,
        }),
      ).ingestDocuments;
      expect(result.created).toBe(SOURCE_FIELDS.length);
      expect(result.outcomes.at(-1)).toEqual({
        key: 'untitled',
        status: 'FAILED',
        message: 'document "untitled": missing title: no title given, no lone <h1> and no <title>',
      });
      const rows = await api.testDb.db.query<{ key: string; title: string; sections: string[] }>(
        `SELECT d.key, d.title, array_agg(s.title ORDER BY s.position) FILTER (WHERE s.id IS NOT NULL) AS sections
         FROM documents d LEFT JOIN sections s ON s.document_id = d.id GROUP BY d.id ORDER BY d.key`,
      );
      // by key: on a server an ingest's documents are written on more than one connection, so ids need not follow the input's order
      expect(rows).toEqual([...SOURCE_FIELDS].sort().map((key) => ({ key, title: 'Doc', sections: key === 'text' ? null : ['Part'] })));
      // The query the console's upload reads: every extension once, each source format with its field.
      const formats = dataOf(await api.exec('{ ingestFormats { name extensions field lines } }')).ingestFormats as Array<{
        name: string;
        extensions: string[];
        field: string | null;
        lines: boolean;
      }>;
      expect(formats.flatMap((f) => f.extensions).sort()).toEqual([...FILE_EXTENSIONS].sort());
      for (const field of SOURCE_FIELDS) expect(formats.find((f) => f.field === field)?.extensions).toEqual([...SOURCE_FORMATS[field].extensions]);
      expect(formats.filter((f) => f.field === null).map((f) => [f.extensions, f.lines])).toEqual(
        Object.values(DOCUMENT_FILE_FORMATS).map((f) => [[...f.extensions], f.lines]),
      );
    } finally {
      await api.close();
    }
  });

  it("is the CLI's ingest help", () => {
    const ingest = buildProgram(async () => undefined).commands.find((c) => c.name() === 'ingest')!;
    for (const ext of FILE_EXTENSIONS) expect(ingest.description()).toContain(ext);
  });

  it("is docs/ingest.md's table of formats, row for row", () => {
    const readme = readFileSync(join(packageRoot(), 'docs', 'ingest.md'), 'utf8');
    const from = readme.indexOf('## Ingest formats\n');
    expect(from).toBeGreaterThan(0);
    const section = readme.slice(from, readme.indexOf('\n#', from + 1));
    const rows = [...section.matchAll(/^\| `(\w+)` \| (.+?) \| (.+) \|$/gm)];
    expect(rows.map((r) => r[1])).toEqual(SOURCE_FIELDS);
    for (const [, field, extensions, description] of rows) {
      const format = SOURCE_FORMATS[field as keyof typeof SOURCE_FORMATS];
      expect(extensions).toBe(format.extensions.map((e) => `\`${e}\``).join(', '));
      expect(description).toBe(format.description);
    }
  });
});
