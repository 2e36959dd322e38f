import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { extractLinks } from './links';
import { prepareDocument } from './prepare';
import { findRstTitle, parseRst, rstInline } from './rst';

/** Real Python 3.11 documentation sources (PSF licence), copied verbatim from python3.11-doc. */
const fixture = (name: string) => readFileSync(path.join(__dirname, '../../test/fixtures/eval', name), 'utf8');

describe('parseRst on library/modulefinder (real source)', () => {
  const parsed = parseRst(fixture('modulefinder.rst.txt'), { docName: 'library/modulefinder' });

  it('takes the single top heading as the title, with roles reduced to their text', () => {
    expect(parsed.title).toBe('modulefinder --- Find modules used by a script');
  });

  it('keeps the heading hierarchy and reads directive bodies as text', () => {
    expect(parsed.sections.map((s) => s.title)).toEqual(['Example usage of ModuleFinder']);
    expect(parsed.abstract).toContain('AddPackagePath(pkg_name, path)');
    expect(parsed.abstract).toContain('Record that the package named pkg_name can be found');
    // Options (`:synopsis:`) and skipped directives (sectionauthor) leave no text.
    expect(parsed.abstract).not.toContain('synopsis');
    expect(parsed.abstract).not.toContain('Kuchling');
  });

  it('keeps literal blocks verbatim, their adornment-like lines not read as headings', () => {
    const example = parsed.sections[0].text ?? '';
    expect(example).toContain("finder.run_script('bacon.py')");
    expect(example).toContain('Modules not imported:');
    expect(parsed.sections[0].sections).toBeUndefined();
  });

  it('writes cross-references as links that ingest extracts, leaving prose', () => {
    const links = extractLinks(parsed.abstract).links.map((l) => [l.anchorText, l.target]);
    expect(links).toContainEqual(['ModuleFinder', 'class:ModuleFinder']);
    expect(links).toContainEqual(['run_script', 'meth:run_script']);
    const doc = prepareDocument({ title: parsed.title, abstract: parsed.abstract, sections: parsed.sections }, { maxWords: 100, maxDocumentBytes: 1e6 });
    const text = doc.passages.map((p) => p.text).join(' ');
    expect(text).not.toMatch(/\]\(|:class:|``/);
    expect(doc.passages.flatMap((p) => p.links.map((l) => l.target))).toContain('ref:modulefinder-example');
  });

  it('returns the targets the document defines, qualified by module and class, with their sections', () => {
    expect(parsed.targets).toEqual([
      { kind: 'module', name: 'modulefinder', sectionPath: [] },
      // each object with its directive and its signature as the text holds it (the entity–attribute set asks about them)
      { kind: 'object', name: 'modulefinder.AddPackagePath', sectionPath: [], object: { directive: 'function', signature: 'AddPackagePath(pkg_name, path)' } },
      {
        kind: 'object',
        name: 'modulefinder.ReplacePackage',
        sectionPath: [],
        object: { directive: 'function', signature: 'ReplacePackage(oldname, newname)' },
      },
      {
        kind: 'object',
        name: 'modulefinder.ModuleFinder',
        sectionPath: [],
        object: { directive: 'class', signature: 'ModuleFinder(path=None, debug=0, excludes=[], replace_paths=[])' },
      },
      { kind: 'object', name: 'modulefinder.ModuleFinder.report', sectionPath: [], object: { directive: 'method', signature: 'report()' } },
      { kind: 'object', name: 'modulefinder.ModuleFinder.run_script', sectionPath: [], object: { directive: 'method', signature: 'run_script(pathname)' } },
      { kind: 'object', name: 'modulefinder.ModuleFinder.modules', sectionPath: [], object: { directive: 'attribute', signature: 'modules' } },
      // The label right before a heading names the section it opens.
      { kind: 'label', name: 'modulefinder-example', sectionPath: ['Example usage of ModuleFinder'] },
    ]);
  });
});

describe('parseRst on the Python FAQ (real source)', () => {
  const parsed = parseRst(fixture('faq-library.rst.txt'), { docName: 'faq/library' });

  it('nests question headings under their group by adornment style', () => {
    expect(parsed.title).toBe('Library and Extension FAQ');
    expect(parsed.sections).toHaveLength(1);
    expect(parsed.sections[0].title).toBe('General Library Questions');
    expect(parsed.sections[0].sections?.map((s) => s.title)).toEqual(["Is there an equivalent to C's onexit() in Python?", 'How do I copy a file?']);
  });

  it("keeps an answer's cross-references and hyperlinks as links", () => {
    const answer = parsed.sections[0].sections![1].text ?? '';
    const { text, links } = extractLinks(answer);
    expect(links.map((l) => l.target)).toEqual([
      'mod:shutil',
      'func:shutil.copyfile',
      'https://en.wikipedia.org/wiki/NTFS#Alternate_data_stream_(ADS)',
      'https://en.wikipedia.org/wiki/Resource_fork',
      'func:shutil.copy2',
    ]);
    // `~shutil.copyfile` shows only the last component, as Sphinx renders it.
    expect(text).toContain('module contains a copyfile function');
    expect(text).toContain('nor resource forks on macOS');
  });
});

describe('parseRst without a unique top heading', () => {
  it('keeps every heading as a section and names the document by the first (as Sphinx names the page)', () => {
    const parsed = parseRst('Tuple Objects\n=============\n\ntuples\n\nStruct Sequence Objects\n=======================\n\nstructs\n', {
      fallbackTitle: 'c-api/tuple',
    });
    expect(parsed.title).toBe('Tuple Objects');
    expect(parsed.sections).toEqual([
      { title: 'Tuple Objects', text: 'tuples' },
      { title: 'Struct Sequence Objects', text: 'structs' },
    ]);
  });

  it('falls back to the given title when there is no heading at all', () => {
    expect(parseRst('.. note::\n\n   Just a note.\n', { fallbackTitle: 'includes/x' }).title).toBe('includes/x');
    expect(findRstTitle('.. note::\n\n   Just a note.\n')).toBeNull();
    expect(findRstTitle('Tuple Objects\n=============\n\ntuples\n')).toBe('Tuple Objects');
  });
});

describe('parseRst as the ingest format (fenceCode)', () => {
  const source = 'Title\n=====\n\nExample::\n\n    a = 1\n\n    print(a)\n\n.. code-block:: sh\n\n   make\n';
  it('fences literal blocks and code directives, so the splitter keeps each whole', () => {
    expect(parseRst(source, { fenceCode: true }).abstract).toBe('Example:\n\n```\na = 1\n\nprint(a)\n```\n\n```\nmake\n```');
  });

  it("leaves them unfenced by default: the evaluation's corpus stays the one it was measured on", () => {
    expect(parseRst(source).abstract).toBe('Example:\n\na = 1\n\nprint(a)\n\nmake');
  });
});

describe('rstInline', () => {
  it('renders roles, literals and emphasis as plain text', () => {
    expect(rstInline('Use ``x[0]`` and *args* with **care**')).toBe('Use x[0] and args with care');
    expect(rstInline(':file:`setup.py` and :kbd:`Ctrl-C`')).toBe('setup.py and Ctrl-C');
    expect(rstInline(':func:`!open` is not linked')).toBe('open is not linked');
  });

  it('resolves relative :doc: targets against the current document', () => {
    expect(rstInline(':doc:`the tutorial <../tutorial/index>`', 'library/os')).toBe('[the tutorial](<doc:tutorial/index>)');
    expect(rstInline(':doc:`/howto/logging`', 'library/os')).toBe('[/howto/logging](<doc:howto/logging>)');
  });

  it('leaves an anchor with brackets as plain text rather than breaking the link syntax', () => {
    expect(rstInline(':class:`list[int] <list>`')).toBe('list[int]');
  });
});

describe('parseRst: a toctree', () => {
  const index = [
    '###################################',
    '  Python Frequently Asked Questions',
    '###################################',
    '',
    '.. toctree::',
    '   :maxdepth: 1',
    '',
    '   general.rst',
    '   Design and History <design>',
    '   self',
    '',
    '.. toctree::',
    '   :hidden:',
    '',
    '   legacy.rst',
    '',
  ].join('\n');

  it('is the text of an index page that holds nothing else: a link a line to its documents, hidden ones left out', () => {
    const parsed = parseRst(index, { docName: 'faq/index' });
    expect(parsed.abstract).toBe('- [general](<doc:faq/general>)\n- [Design and History](<doc:faq/design>)');
    const doc = prepareDocument({ key: 'faq/index', rst: index });
    expect(doc.passages.map((p) => p.links.map((l) => l.target))).toEqual([['doc:faq/general', 'doc:faq/design']]);
  });
});
