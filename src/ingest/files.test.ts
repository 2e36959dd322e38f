import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { IngestError } from './errors';
import { readInputFiles, type InputItem } from './files';
import { prepareDocument } from './prepare';

async function collect(paths: string[], opts?: Parameters<typeof readInputFiles>[1]): Promise<InputItem[]> {
  const items: InputItem[] = [];
  for await (const item of readInputFiles(paths, opts)) items.push(item);
  return items;
}

describe('readInputFiles', () => {
  let root: string;
  const at = (...parts: string[]): string => path.join(root, ...parts);

  beforeAll(() => {
    root = mkdtempSync(path.join(tmpdir(), 'dhr-ingest-'));
    mkdirSync(at('guide'));
    mkdirSync(at('.hidden'));
    writeFileSync(at('a.json'), JSON.stringify([{ title: 'A0', abstract: 'x' }, 7, { title: 'A2', abstract: 'y' }]));
    writeFileSync(at('b.jsonl'), ['{"title":"L1","abstract":"one"}', '', '{"title": broken', '  ', '{"title":"L5","abstract":"five"}', '[1]', ''].join('\n'));
    writeFileSync(at('c.txt'), '\n  Text Title  \nBody line one.\n\nBody line two.\n');
    writeFileSync(at('d.bin'), 'not an input');
    writeFileSync(at('e.md'), Buffer.from([0x23, 0x20, 0x48, 0x69, 0x0a, 0xff, 0xfe, 0x0a])); // "# Hi\n" + invalid bytes
    writeFileSync(at('f.json'), '{"title": "F", "abstract": "f"}');
    writeFileSync(at('g.json'), '{"title": ');
    writeFileSync(at('guide', 'intro.md'), '# Introduction\n\nWelcome.\n\n## Next\n\nMore.\n');
    writeFileSync(at('guide', 'notitle.markdown'), 'Just text, no heading.\n');
    writeFileSync(at('.hidden', 'x.json'), '{"title":"hidden"}');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('walks a directory in sorted order and yields documents and errors per item', async () => {
    const items = await collect([root]);
    const summary = items.map((i) => [path.relative(root, i.origin), i.error ? `error: ${i.error.problem}` : i.input?.title]);
    expect(summary).toEqual([
      ['a.json#0', 'A0'],
      ['a.json#1', 'error: expected a JSON object'],
      ['a.json#2', 'A2'],
      ['b.jsonl:1', 'L1'],
      ['b.jsonl:3', expect.stringMatching(/^error: invalid JSON: /)],
      ['b.jsonl:5', 'L5'],
      ['b.jsonl:6', 'error: expected a JSON object'],
      ['c.txt', 'Text Title'],
      ['e.md', 'error: invalid UTF-8'],
      ['f.json', 'F'],
      ['g.json', expect.stringMatching(/^error: invalid JSON: /)],
      [path.join('guide', 'intro.md'), undefined], // the H1 gives the title in prepareDocument
      [path.join('guide', 'notitle.markdown'), 'notitle'],
    ]);
    for (const item of items) {
      if (item.error) {
        expect(item.error).toBeInstanceOf(IngestError);
        expect(item.error.document).toBe(item.origin);
      }
    }
  });

  it('gives Markdown and text files a key from their relative path', async () => {
    const items = await collect([root]);
    const byOrigin = new Map(items.map((i) => [path.relative(root, i.origin), i]));
    expect(byOrigin.get('c.txt')!.input).toEqual({ key: 'c', title: 'Text Title', text: 'Body line one.\n\nBody line two.\n' });
    expect(byOrigin.get(path.join('guide', 'intro.md'))!.input).toEqual({
      key: 'guide/intro',
      markdown: '# Introduction\n\nWelcome.\n\n## Next\n\nMore.\n',
    });
    const intro = prepareDocument(byOrigin.get(path.join('guide', 'intro.md'))!.input!);
    expect([intro.key, intro.title, intro.sections.map((s) => s.title)]).toEqual(['guide/intro', 'Introduction', ['Next']]);
    const notitle = prepareDocument(byOrigin.get(path.join('guide', 'notitle.markdown'))!.input!);
    expect([notitle.key, notitle.title, notitle.abstract]).toEqual(['guide/notitle', 'notitle', 'Just text, no heading.']);
  });

  it('keeps the extension in the key of files of different formats that share a name', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dhr-clash-'));
    try {
      mkdirSync(path.join(dir, 'sub'));
      writeFileSync(path.join(dir, 'sub', 'a.md'), '# A in Markdown\n\nText.\n');
      writeFileSync(path.join(dir, 'sub', 'a.html'), '<h1>A in HTML</h1><p>Text.</p>');
      writeFileSync(path.join(dir, 'sub', 'a.json'), '{"title": "A as JSON", "abstract": "x"}');
      writeFileSync(path.join(dir, 'sub', 'b.md'), '# B\n\nText.\n');
      const keys = (await collect([dir])).map((i) => i.input?.key ?? i.input?.title);
      // a.json is a file of documents (keyed by its content), so it clashes with no one.
      expect(keys).toEqual(['sub/a.html', 'A as JSON', 'sub/a.md', 'sub/b']);
      const direct = (await collect([path.join(dir, 'sub', 'a.md'), path.join(dir, 'sub', 'a.html'), path.join(dir, 'sub', 'b.md')])).map((i) => i.input?.key);
      expect(direct).toEqual(['a.md', 'a.html', 'b']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads files named directly, reporting unknown types and missing paths', async () => {
    const items = await collect([at('guide', 'intro.md'), at('d.bin'), at('nope.json'), at('f.json')]);
    expect(items.map((i) => [path.relative(root, i.origin), i.error?.problem ?? i.input?.key ?? i.input?.title])).toEqual([
      [path.join('guide', 'intro.md'), 'intro'],
      ['d.bin', 'unsupported file type ".bin" (use .json, .jsonl, .ndjson, .md, .markdown, .html, .htm, .rst, .rest, .txt)'],
      ['nope.json', expect.stringMatching(/^cannot read: ENOENT/)],
      ['f.json', 'F'],
    ]);
  });

  it('reports files over the size limit', async () => {
    // A one-document file is bounded as its source: 8 × maxDocumentBytes of markup.
    const items = await collect([at('f.json'), at('c.txt')], { maxFileBytes: 10, maxDocumentBytes: 5 });
    expect(items.map((i) => i.error?.problem)).toEqual([
      'file is 31 bytes, over the limit of 10 bytes',
      "file is 47 bytes, over the limit of 40 bytes for a document's source (8 × MAX_DOCUMENT_BYTES)",
    ]);
    expect((await collect([at('c.txt')], { maxDocumentBytes: 6 }))[0].error).toBeUndefined();
  });

  it('reads an HTML page that is not UTF-8 in the encoding it declares, else as windows-1252, as browsers do; Markdown stays UTF-8 only', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dhr-charset-'));
    const latin1 = (html: string) => Buffer.from(html, 'latin1');
    // libxslt's manual pages declare ISO-8859-1 so; the second names it in an XML declaration only.
    writeFileSync(
      path.join(dir, 'a.html'),
      latin1(
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1" /><title>Caf\u00e9</title></head><body><p>cr\u00e8me</p></body></html>',
      ),
    );
    writeFileSync(path.join(dir, 'b.html'), latin1('<?xml version="1.0" encoding="ISO-8859-1"?><html><title>Na\u00efve</title><p>x</p></html>'));
    writeFileSync(path.join(dir, 'c.html'), latin1('<title>Caf\u00e9 \u00bfs\u00ed?</title><p>x</p>'));
    writeFileSync(path.join(dir, 'd.md'), latin1('<meta charset="iso-8859-1">\n# Caf\u00e9\n'));
    try {
      const items = await collect([dir]);
      expect(items.map((i) => [path.basename(i.origin), i.error?.problem ?? prepareDocument(i.input!).title])).toEqual([
        ['a.html', 'Caf\u00e9'],
        ['b.html', 'Na\u00efve'],
        ['c.html', 'Caf\u00e9 \u00bfs\u00ed?'],
        ['d.md', 'invalid UTF-8'], // Markdown declares no encoding
      ]);
      expect(prepareDocument(items[0].input!).abstract).toBe('cr\u00e8me');
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  it('reports an over-long JSONL line and goes on', async () => {
    const file = at('long.ndjson');
    writeFileSync(file, `{"title":"${'x'.repeat(100)}"}\n{"title":"ok"}\n{"title":"${'y'.repeat(100)}"}`);
    try {
      const items = await collect([file], { maxFileBytes: 50 });
      expect(items.map((i) => [path.basename(i.origin), i.error?.problem ?? i.input?.title])).toEqual([
        ['long.ndjson:1', 'line is over the limit of 50 bytes'],
        ['long.ndjson:2', 'ok'],
        ['long.ndjson:3', 'line is over the limit of 50 bytes'],
      ]);
    } finally {
      rmSync(file);
    }
  });

  it('reads JSONL with CRLF line ends and invalid UTF-8 on one line only', async () => {
    const file = at('mixed.jsonl');
    writeFileSync(
      file,
      Buffer.concat([Buffer.from('{"title":"one"}\r\n{"title":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\r\n{"title":"thr\u00e9e"}\r\n')]),
    );
    try {
      const items = await collect([file]);
      expect(items.map((i) => [path.basename(i.origin), i.error?.problem ?? i.input?.title])).toEqual([
        ['mixed.jsonl:1', 'one'],
        ['mixed.jsonl:2', 'invalid UTF-8'],
        ['mixed.jsonl:3', 'thr\u00e9e'],
      ]);
    } finally {
      rmSync(file);
    }
  });

  it('yields lazily: the first item comes before later files are read', async () => {
    const iterator = readInputFiles([root]);
    const first = await iterator.next();
    expect(path.basename((first.value as InputItem).origin)).toBe('a.json#0');
    await iterator.return(undefined);
  });
});
