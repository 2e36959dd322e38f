import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { IngestError } from './errors';
import { MAX_HTML_DEPTH, findHtmlTitle, parseHtml } from './html';
import { prepareDocument } from './prepare';
import type { SectionInput } from './types';

/** Real pages: Sphinx (Read the Docs theme) output from Debian's python-domain2idna-doc (test/fixtures/formats). */
const page = (name: string): string => readFileSync(path.join(__dirname, '../../test/fixtures/formats/domain2idna/html', name), 'utf8');
const titles = (sections: SectionInput[]): unknown[] => sections.map((s) => (s.sections ? [s.title, titles(s.sections)] : s.title));
const allText = (tree: { abstract: string; sections: SectionInput[] }): string => {
  const walk = (ss: SectionInput[]): string => ss.map((s) => `${s.title}\n${s.text ?? ''}\n${walk(s.sections ?? [])}`).join('\n');
  return `${tree.abstract}\n${walk(tree.sections)}`;
};

describe('parseHtml on a Sphinx page (usage.html)', () => {
  const parsed = parseHtml(page('usage.html'));

  it('takes the lone leading h1 as the title and the h2s as its sections', () => {
    expect(parsed.title).toBe('Usage');
    expect(titles(parsed.sections)).toEqual(['As a Python module', 'From a terminal']);
  });

  it("drops the page's navigation, search form, scripts and footer", () => {
    const text = allText(parsed);
    for (const chrome of [
      'Search docs',
      'View page source',
      'Get and install domain2idna',
      'SphinxRtdTheme',
      'jQuery',
      'Built with',
      'Copyright',
      'Previous',
    ]) {
      expect(text).not.toContain(chrome);
    }
  });

  it('keeps a <pre> block whole, with its lines and indentation, fenced for the splitter', () => {
    const terminal = parsed.sections[1].text!;
    expect(terminal).toContain('```\nusage: domain2idna [-h]');
    expect(terminal).toContain('\n    -h, --help            show this help message and exit\n');
    expect(terminal).toContain('\n```'); // closed
    expect(terminal.startsWith('Here is the list of available command when calling `domain2idna` from a terminal.')).toBe(true);
  });

  it('keeps the Python example whole in one passage once prepared', () => {
    const doc = prepareDocument({ key: 'usage', html: page('usage.html') });
    const module = doc.passages.filter((p) => p.titlePath[1] === 'As a Python module');
    expect(module).toHaveLength(1);
    expect(module[0].text).toContain('from domain2idna import domain2idna\n\nDOMAINS = [\n    "bittréẋ.com"');
    expect(module[0].text.endsWith('print( "Converted domain: %s" % domain2idna(DOMAINS[0]))')).toBe(true);
    // The terminal help (about 110 words) is over a passage: it is split between lines, every passage within the limit.
    const terminal = doc.passages.filter((p) => p.titlePath[1] === 'From a terminal');
    for (const p of terminal) expect(p.wordCount).toBeLessThanOrEqual(100);
    expect(terminal.map((p) => p.text).join('\n')).toContain('    -o OUTPUT, --output OUTPUT\n');
  });
});

describe('parseHtml on a page with two h1s (installation.html)', () => {
  const parsed = parseHtml(page('installation.html'));

  it('takes <title> as the title and nests h1 > h2 > h3', () => {
    expect(parsed.title).toBe('Requirements — domain2idna documentation');
    expect(titles(parsed.sections)).toEqual([
      ['Requirements', ['Python 3.6.8+ && Python < 4', 'colorama']],
      ['Get and install domain2idna', [['Using `pip`', ['From PyPi', 'From GitHub']], 'Pure Python method']],
      'First steps',
    ]);
  });

  it('keeps links as [text](href), and drops permalink anchors', () => {
    const pypi = parsed.sections[1].sections![0].sections![0].text!;
    expect(pypi).toContain('[pip documentation](https://pip.pypa.io/en/stable/reference/pip_install/?highlight=--user#cmdoption-user)');
    expect(allText(parsed)).not.toContain('#requirements');
    expect(findHtmlTitle(page('installation.html'))).toBe(parsed.title);
  });
});

describe('parseHtml', () => {
  it('writes a table a row a line, drops comments and ¶ permalinks, and reads ARIA chrome as chrome', () => {
    const html =
      '<html><head><title>T</title><style>p{}</style></head><body><div role="navigation">Home</div><!-- hidden -->' +
      '<h2>Ports<a class="headerlink" href="#ports" title="Permalink">¶</a></h2><table><tr><th>Port</th><th>Depth</th></tr><tr><td>Oslo</td><td>12 <b>m</b></td></tr></table>' +
      '<p hidden>secret</p><aside>tip</aside><p>After.</p></body></html>';
    expect(parseHtml(html)).toEqual({ title: 'T', abstract: '', sections: [{ title: 'Ports', text: 'Port | Depth\nOslo | 12 m\n\nAfter.' }] });
  });

  it('titles a heading holding only an image by its alt text and one holding only code by the code', () => {
    const html = '<title>T</title><h2><img src="logo.png" alt="Logo"></h2><p>a</p><h2><code>run()</code></h2><p>b</p>';
    expect(parseHtml(html)).toEqual({
      title: 'T',
      abstract: '',
      sections: [
        { title: 'Logo', text: 'a' },
        { title: '`run()`', text: 'b' },
      ],
    });
  });

  it('merges the text under a heading without text (an anchor target, an image without alt) into the section before it, with a warning', () => {
    const html = '<title>T</title><h2>Keys</h2><p>a</p>\n<h2><a id="x"></a></h2><p>b</p>\n\n<h3><img src="i.png"></h3><p>c</p>';
    expect(parseHtml(html)).toEqual({
      title: 'T',
      abstract: '',
      sections: [{ title: 'Keys', text: 'a\n\nb\n\nc' }],
      warnings: [
        'the <h2> at line 2 (anchor "x") has no text: its text is read as part of the section before it',
        'the <h3> at line 4 has no text: its text is read as part of the section before it',
      ],
    });
  });

  it('uses the given title, keeping an h1 that differs from it as a section', () => {
    expect(parseHtml('<h1>Intro</h1><p>x</p>', 'Guide')).toEqual({ title: 'Guide', abstract: '', sections: [{ title: 'Intro', text: 'x' }] });
    expect(parseHtml('<h1>Guide</h1><p>x</p>', 'Guide')).toEqual({ title: 'Guide', abstract: 'x', sections: [] });
  });

  it('refuses a page without any title, naming the document', () => {
    expect(() => parseHtml('<p>words</p>', undefined, 'a.html')).toThrow(IngestError);
    expect(() => parseHtml('<p>words</p>', undefined, 'a.html')).toThrow(/document "a.html": missing title/);
    expect(findHtmlTitle('<p>words</p>')).toBeNull();
  });

  it('refuses a page nested deeper than MAX_HTML_DEPTH with a reason, not a stack overflow', () => {
    const deep = `<title>Deep</title>${'<div>'.repeat(MAX_HTML_DEPTH + 10)}x`;
    expect(() => parseHtml(deep, undefined, 'deep.html')).toThrow(`document "deep.html": HTML nested deeper than ${MAX_HTML_DEPTH} elements`);
  });
});
