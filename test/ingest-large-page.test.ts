/**
 * MAX_DOCUMENT_BYTES bounds the text a document stores, not its source's markup: a generated
 * reference page (Node.js's api/all.html is 8.4 MB of HTML holding 4.1 MB of text) goes in, up to
 * the limit with a warning when its text is over it; its markup is bounded apart (8 × the limit),
 * and a JSON title tree over the limit is still refused. The pages are built here, not committed.
 */
import { ErrorCode } from '../src/errors';
import { IngestError } from '../src/ingest/errors';
import { prepareDocument } from '../src/ingest/prepare';
import { DEFAULT_INGEST_OPTIONS, type IngestOptions } from '../src/ingest/types';
import { ingest } from '../src/pipeline/ingest';
import { useTestDatabase } from './helpers/database';

/**
 * An API reference page as generators write them: every word of a paragraph in a highlighted
 * span, so the markup is several times the text (plain: no spans). `sections` h2 sections of
 * `words` words each.
 */
function referencePage(sections: number, words: number, plain = false): string {
  const parts = ['<!DOCTYPE html><html><head><meta charset="utf-8"><title>Generated reference</title></head><body><h1>Generated reference</h1>'];
  for (let s = 0; s < sections; s++) {
    parts.push(`<section id="api-${s}"><h2 id="h-${s}"><a class="mark" href="#h-${s}">Function number ${s}</a></h2><p>`);
    for (let w = 0; w < words; w++) parts.push(plain ? `w${s}x${w} ` : `<span class="hljs-token hljs-keyword" data-line="${w}">w${s}x${w}</span> `);
    parts.push('</p></section>');
  }
  parts.push('</body></html>');
  return parts.join('');
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('a page whose markup is over MAX_DOCUMENT_BYTES', () => {
  const t = useTestDatabase({ each: true });

  /** What the store holds of the document: its title, abstract, section titles and passages' text, in bytes. */
  async function storedText(key: string): Promise<{ bytes: number; sections: string[] }> {
    const [d] = await t.db.query<{ id: number; title: string; abstract: string }>('SELECT id, title, abstract FROM documents WHERE key = $1', [key]);
    const sections = await t.db.query<{ title: string }>('SELECT title FROM sections WHERE document_id = $1 ORDER BY id', [d.id]);
    const passages = await t.db.query<{ text: string }>('SELECT text FROM passages WHERE document_id = $1', [d.id]);
    return {
      bytes: bytes(d.title) + sections.reduce((n, s) => n + bytes(s.title), 0) + passages.reduce((n, p) => n + bytes(p.text), 0),
      sections: sections.map((s) => s.title),
    };
  }

  it('ingests it whole when its text is under the limit (2.1 MB of HTML at the default 2 MB)', async () => {
    const html = referencePage(45, 900);
    expect(bytes(html)).toBeGreaterThan(DEFAULT_INGEST_OPTIONS.maxDocumentBytes);
    const result = await ingest(t.db, [{ key: 'reference', html }], DEFAULT_INGEST_OPTIONS);
    expect(result.outcomes[0]).toMatchObject({ status: 'created', message: null, warnings: [] });
    const stored = await storedText('reference');
    expect(stored.sections).toHaveLength(45);
    expect(stored.bytes).toBeLessThan(DEFAULT_INGEST_OPTIONS.maxDocumentBytes);
  }, 120_000);

  it('ingests it up to the limit, with a warning, when its text is over it; another limit cuts it elsewhere', async () => {
    const options: IngestOptions = { ...DEFAULT_INGEST_OPTIONS, maxDocumentBytes: 40_000 };
    const html = referencePage(100, 100, true);
    expect(bytes(html)).toBeLessThan(8 * 40_000);
    const first = await ingest(t.db, [{ key: 'reference', html }], options);
    expect(first.outcomes[0]).toMatchObject({ status: 'created', message: null });
    expect(first.outcomes[0].warnings).toEqual([
      expect.stringMatching(
        /^its text is \d+ bytes, over the limit of 40000 bytes \(MAX_DOCUMENT_BYTES\): ingested up to the limit, \d+ of its 100 sections left out$/,
      ),
    ]);
    const stored = await storedText('reference');
    expect(stored.bytes).toBeLessThanOrEqual(40_000);
    expect(stored.bytes).toBeGreaterThan(30_000);
    // In reading order: the first sections are there, the last are not.
    expect(stored.sections[0]).toBe('Function number 0');
    expect(stored.sections).not.toContain('Function number 99');
    // The same page at the same limit is unchanged; at a larger one it is read again, whole.
    expect((await ingest(t.db, [{ key: 'reference', html }], options)).outcomes[0].status).toBe('unchanged');
    const whole = await ingest(t.db, [{ key: 'reference', html }], DEFAULT_INGEST_OPTIONS);
    expect(whole.outcomes[0]).toMatchObject({ status: 'updated', warnings: [] });
    expect((await storedText('reference')).sections).toHaveLength(100);
  }, 120_000);

  it('refuses markup over 8 × the limit, and a JSON title tree over the limit, typed and naming the sizes; nothing is written', async () => {
    const options: IngestOptions = { ...DEFAULT_INGEST_OPTIONS, maxDocumentBytes: 10_000 };
    const html = referencePage(20, 100);
    const tree = { key: 'tree', title: 'Tree', sections: [{ title: 'S', text: 'word '.repeat(2_001) }] };
    const result = await ingest(t.db, [{ key: 'reference', html }, tree], options);
    expect(result.outcomes.map((o) => [o.status, o.message])).toEqual([
      ['failed', `document "reference": html is ${bytes(html)} bytes, over the limit of 80000 bytes for a document's source (8 × MAX_DOCUMENT_BYTES)`],
      ['failed', 'document "tree": document is 10010 bytes, over the limit of 10000 bytes'],
    ]);
    const error = (() => {
      try {
        prepareDocument({ key: 'reference', html }, options);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(IngestError);
    expect(error).toMatchObject({ code: ErrorCode.INGEST_INVALID });
    expect(await t.db.query('SELECT key FROM documents')).toEqual([]);
  });
});
