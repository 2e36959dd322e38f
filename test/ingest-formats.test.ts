import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IngestError } from '../src/ingest/errors';
import { readInputFiles } from '../src/ingest/files';
import { MAX_HTML_DEPTH } from '../src/ingest/html';
import { DEFAULT_INGEST_OPTIONS, type DocumentInput } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import { packageRoot } from '../src/paths';
import { useTestDatabase } from './helpers/database';

/**
 * Real documentation files (test/fixtures/formats: Sphinx HTML and its reST sources from Debian's
 * python-domain2idna-doc, the Markdown README of Debian's libxmlsec1) and a few bad ones, walked
 * as `dhr ingest <dir>` walks them and written to a real store.
 */
describe('ingesting a directory of real HTML, reST and Markdown files', () => {
  const t = useTestDatabase();
  let dir: string;
  let outcomes: Awaited<ReturnType<typeof ingestDocuments>>['outcomes'];
  let origins: string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dhr-ingest-formats-'));
    cpSync(join(packageRoot(), 'test', 'fixtures', 'formats'), dir, { recursive: true });
    // Markdown names no encoding: bytes that are not UTF-8 are refused (HTML's are read as windows-1252, as browsers do).
    writeFileSync(join(dir, 'bad-bytes.md'), Buffer.from('# T\n\n\xff\xfe\n', 'latin1'));
    writeFileSync(join(dir, 'bad-deep.html'), `<title>Deep</title>${'<div>'.repeat(MAX_HTML_DEPTH + 1)}text`);
    writeFileSync(join(dir, 'bad-empty.rst'), 'Title only\n==========\n');
    const items: Array<DocumentInput | IngestError> = [];
    origins = [];
    for await (const item of readInputFiles([dir])) {
      items.push(item.error ?? item.input!);
      origins.push(item.origin.slice(dir.length + 1));
    }
    ({ outcomes } = await ingestDocuments(t.db, items, DEFAULT_INGEST_OPTIONS, (i) => origins[i]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails each bad file alone, with its path and the reason, and ingests the others', () => {
    const byOrigin = Object.fromEntries(outcomes.map((o) => [origins[o.index], o]));
    expect(byOrigin['bad-bytes.md'].message).toBe(`document "${join(dir, 'bad-bytes.md')}": invalid UTF-8`);
    expect(byOrigin['bad-deep.html'].message).toBe(`document "${join(dir, 'bad-deep.html')}": HTML nested deeper than ${MAX_HTML_DEPTH} elements`);
    expect(byOrigin['bad-empty.rst'].message).toMatch(/^document "bad-empty": empty document/);
    expect(outcomes.filter((o) => o.status === 'failed')).toHaveLength(3);
    expect(
      Object.entries(byOrigin)
        .filter(([, o]) => o.status === 'created')
        .map(([origin]) => origin)
        .sort(),
    ).toEqual([
      'domain2idna/html/installation.html',
      'domain2idna/html/usage.html',
      'domain2idna/rst/installation.rst',
      'domain2idna/rst/usage.rst',
      'xmlsec1/README.md',
    ]);
  });

  it('stores the title tree of each format', async () => {
    const rows = await t.db.query<{ key: string; title: string; paths: string[] }>(
      `SELECT d.key, d.title, array_agg(array_to_string(ARRAY[d.title] || ARRAY(
                SELECT a.title FROM sections a WHERE a.document_id = d.id AND a.position <= s.position AND a.depth < s.depth
                AND NOT EXISTS (SELECT 1 FROM sections b WHERE b.document_id = d.id AND b.depth = a.depth AND b.position > a.position AND b.position <= s.position)
                ORDER BY a.depth) || s.title, ' > ') ORDER BY s.position) AS paths
       FROM documents d JOIN sections s ON s.document_id = d.id GROUP BY d.id ORDER BY d.key`,
    );
    const tree = Object.fromEntries(rows.map((r) => [r.key, { title: r.title, paths: r.paths }]));
    expect(tree['domain2idna/html/usage']).toEqual({ title: 'Usage', paths: ['Usage > As a Python module', 'Usage > From a terminal'] });
    expect(tree['domain2idna/rst/usage']).toEqual(tree['domain2idna/html/usage']);
    expect(tree['domain2idna/html/installation'].title).toBe('Requirements — domain2idna documentation');
    expect(tree['domain2idna/html/installation'].paths).toContain(
      'Requirements — domain2idna documentation > Get and install domain2idna > Using `pip` > From GitHub',
    );
    expect(tree['domain2idna/rst/installation'].paths).toContain('Requirements > Get and install domain2idna > Using pip > From GitHub');
    expect(tree['xmlsec1/README']).toEqual({
      title: 'XMLSec Library',
      paths: [
        'XMLSec Library > Documentation',
        'XMLSec Library > License',
        'XMLSec Library > Building and installing XMLSec',
        'XMLSec Library > Building and installing XMLSec > Prerequisites',
        'XMLSec Library > Building and installing XMLSec > Building XMLSec on Linux, Unix, MacOSX, MinGW, Cygwin, etc',
        'XMLSec Library > Building and installing XMLSec > Building XMLSec on Windows',
      ],
    });
  });

  it("keeps no page chrome: the HTML's passages hold none of its navigation, scripts or footer", async () => {
    const rows = await t.db.query<{ text: string }>(
      `SELECT p.text FROM passages p JOIN documents d ON d.id = p.document_id WHERE d.key LIKE 'domain2idna/html/%'`,
    );
    const all = rows.map((r) => r.text).join('\n');
    for (const chrome of ['Search docs', 'View page source', 'SphinxRtdTheme', 'Built with', 'Copyright 2023', 'Previous']) expect(all).not.toContain(chrome);
  });

  it('keeps each code block whole in one passage, in every format', async () => {
    const passages = await t.db.query<{ key: string; text: string; word_count: number }>(
      'SELECT d.key, p.text, p.word_count FROM passages p JOIN documents d ON d.id = p.document_id ORDER BY d.key, p.ordinal',
    );
    const holding = (key: string, needle: string) => passages.filter((p) => p.key === key && p.text.includes(needle));
    for (const key of ['domain2idna/html/usage', 'domain2idna/rst/usage']) {
      const [example, ...more] = holding(key, 'from domain2idna import domain2idna');
      expect(more).toEqual([]);
      expect(example.text).toContain('#!/usr/bin/env python3');
      expect(example.text).toContain('print( "Converted domain: %s" % domain2idna(DOMAINS[0]))');
    }
    // Markdown: the apt block (48 words) after 27 words of prose does not fit the passage being packed: it moves whole.
    const [apt] = holding('xmlsec1/README', 'apt install automake');
    expect(apt.text).toMatch(/^ {2}# common build tools\n {2}apt install automake autoconf libtool libtool-bin gcc\n/);
    expect(apt.text).toContain('apt install help2man man2html gtk-doc-tools');
    for (const p of passages) expect(p.word_count).toBeLessThanOrEqual(100);
  });

  it('keeps links: anchor text in the passage, the target stored', async () => {
    const links = await t.db.query<{ key: string; target: string; anchor_text: string }>(
      'SELECT d.key, l.target, l.anchor_text FROM links l JOIN documents d ON d.id = l.document_id ORDER BY l.id',
    );
    expect(links).toContainEqual({ key: 'xmlsec1/README', target: 'https://www.aleksey.com/xmlsec/', anchor_text: 'XMLSec website' });
    expect(links).toContainEqual({
      key: 'domain2idna/html/installation',
      target: 'https://pip.pypa.io/en/stable/reference/pip_install/?highlight=--user#cmdoption-user',
      anchor_text: 'pip documentation',
    });
  });
});
