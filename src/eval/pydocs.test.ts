import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { extractLinks } from '../ingest/links';
import { parseRst } from '../ingest/rst';
import { resolveCorpusLinks, TargetIndex } from './pydocs';

const fixture = (name: string) => readFileSync(path.join(__dirname, '../../test/fixtures/eval', name), 'utf8');

describe('TargetIndex: FAQ cross-references to corpus documents and sections', () => {
  const index = new TargetIndex();
  index.add('library/modulefinder', parseRst(fixture('modulefinder.rst.txt'), { docName: 'library/modulefinder' }).targets);

  it('resolves modules, qualified and unqualified objects, and labels to their sections', () => {
    expect(index.resolve('mod:modulefinder')).toEqual({ document: 'pydocs/library/modulefinder', path: [] });
    expect(index.resolve('class:modulefinder.ModuleFinder')).toEqual({ document: 'pydocs/library/modulefinder', path: [] });
    // A unique suffix: `ModuleFinder.run_script` is `modulefinder.ModuleFinder.run_script`.
    expect(index.resolve('meth:ModuleFinder.run_script()')?.document).toBe('pydocs/library/modulefinder');
    expect(index.resolve('ref:modulefinder-example')).toEqual({
      document: 'pydocs/library/modulefinder',
      path: ['Example usage of ModuleFinder'],
    });
    expect(index.resolve('doc:library/modulefinder')?.document).toBe('pydocs/library/modulefinder');
  });

  it('leaves what is outside the corpus unresolved', () => {
    expect(index.resolve('mod:atexit')).toBeNull();
    expect(index.resolve('https://pypi.org')).toBeNull();
    expect(index.resolve('file:setup.py')).toBeNull();
  });

  it('gives a real FAQ answer the gold its links resolve to', () => {
    const faq = parseRst(fixture('faq-library.rst.txt'), { docName: 'faq/library' });
    const onexit = faq.sections[0].sections![0];
    const targets = extractLinks(onexit.text!).links.map((l) => l.target);
    expect(targets).toEqual(['mod:atexit', 'c:func:onexit']);
    index.add('library/atexit', parseRst('atexit\n======\n\n.. module:: atexit\n\ntext\n', { docName: 'library/atexit' }).targets);
    expect(targets.map((t) => index.resolve(t)?.document ?? null)).toEqual(['pydocs/library/atexit', null]);
  });
});

describe('resolveCorpusLinks: the corpus links to its own documents by key', () => {
  it('points resolvable cross-references at the defining document, keeps the anchor text and the rest', () => {
    const index = new TargetIndex();
    index.add('library/modulefinder', parseRst(fixture('modulefinder.rst.txt'), { docName: 'library/modulefinder' }).targets);
    const text = 'See [ModuleFinder](<class:modulefinder.ModuleFinder>) and [atexit](<mod:atexit>) or [PyPI](<https://pypi.org>).';
    const resolved = resolveCorpusLinks(text, index);
    const before = extractLinks(text);
    const after = extractLinks(resolved);
    expect(after.links.map((l) => l.target)).toEqual(['pydocs/library/modulefinder', 'mod:atexit', 'https://pypi.org']);
    // What ingest embeds and indexes (the text with anchors) does not change.
    expect(after.text).toBe(before.text);
    expect(after.links.map((l) => l.anchorText)).toEqual(before.links.map((l) => l.anchorText));
  });
});
