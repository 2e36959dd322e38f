import { extractLinks } from './links';

describe('extractLinks', () => {
  it('replaces a Markdown link by its anchor and records where the anchor is', () => {
    const r = extractLinks('See [the docs](https://x.y/z) now.');
    expect(r.text).toBe('See the docs now.');
    expect(r.links).toEqual([{ target: 'https://x.y/z', anchorText: 'the docs', start: 4, end: 12 }]);
  });

  it('replaces wiki links, with and without an anchor', () => {
    const r = extractLinks('From [[Berlin]] to [[Paris|the French capital]].');
    expect(r.text).toBe('From Berlin to the French capital.');
    expect(r.links).toEqual([
      { target: 'Berlin', anchorText: 'Berlin', start: 5, end: 11 },
      { target: 'Paris', anchorText: 'the French capital', start: 15, end: 33 },
    ]);
  });

  it('gives offsets in the cleaned text, after earlier replacements', () => {
    const r = extractLinks('[a](http://one.example/long/path) and [[Target Doc|b]] then [c d](x)');
    expect(r.text).toBe('a and b then c d');
    for (const l of r.links) expect(r.text.slice(l.start, l.end)).toBe(l.anchorText);
    expect(r.links.map((l) => l.target)).toEqual(['http://one.example/long/path', 'Target Doc', 'x']);
  });

  it('keeps targets as written: trimmed, title dropped, nothing decoded', () => {
    expect(extractLinks('[a]( foo%20bar )').links[0].target).toBe('foo%20bar');
    expect(extractLinks('[a](http://u "A title")').links[0].target).toBe('http://u');
    expect(extractLinks("[a](http://u 'A title')").links[0].target).toBe('http://u');
    expect(extractLinks('[a](<my page>)').links[0].target).toBe('my page');
    expect(extractLinks('[w](https://en.wikipedia.org/wiki/Foo_(bar))').links[0].target).toBe('https://en.wikipedia.org/wiki/Foo_(bar)');
    expect(extractLinks('[[ Spaced Target | spaced anchor ]]').links[0]).toEqual({
      target: 'Spaced Target',
      anchorText: 'spaced anchor',
      start: 0,
      end: 13,
    });
  });

  it('leaves images alone', () => {
    const r = extractLinks('![alt text](img.png) and [x](y)');
    expect(r.text).toBe('![alt text](img.png) and x');
    expect(r.links).toEqual([{ target: 'y', anchorText: 'x', start: 25, end: 26 }]);
  });

  it('ignores links inside inline code spans', () => {
    const r = extractLinks('Use `[a](b)` or ``[[c]] ` x`` but [d](e)');
    expect(r.text).toBe('Use `[a](b)` or ``[[c]] ` x`` but d');
    expect(r.links.map((l) => l.target)).toEqual(['e']);
  });

  it('treats an unclosed backtick as a literal', () => {
    const r = extractLinks('a ` b [c](d)');
    expect(r.text).toBe('a ` b c');
    expect(r.links).toHaveLength(1);
  });

  it('leaves text that is not a link unchanged', () => {
    for (const s of ['[1] and [x] (y)', 'a [[ b', 'a ]] b', '\\[not](link)', '[open(paren', 'x [[]] y', '[a](b "unclosed)']) {
      expect(extractLinks(s)).toEqual({ text: s, links: [] });
    }
  });

  it('collapses whitespace in anchor text but points at it in the text', () => {
    const r = extractLinks('go [ two\n words ](t) now');
    expect(r.text).toBe('go  two\n words  now');
    expect(r.links[0]).toEqual({ target: 't', anchorText: 'two words', start: 4, end: 14 });
  });

  it('leaves long runs of unmatched link syntax as plain text', () => {
    for (const junk of ['![', '[a](', '[[a ', '[', '` a `` b ']) {
      const text = junk.repeat(Math.floor(400_000 / junk.length));
      expect(extractLinks(text)).toEqual({ text, links: [] });
    }
  });
});
