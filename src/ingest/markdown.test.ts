import { IngestError } from './errors';
import { findMarkdownTitle, parseMarkdown } from './markdown';

describe('parseMarkdown', () => {
  it('takes a lone leading H1 as the title and the text under it as the abstract', () => {
    const md = '# My Doc\n\nIntro line one\nline two.\n\nSecond paragraph.\n\n## Setup\n\nInstall it.\n';
    expect(parseMarkdown(md)).toEqual({
      title: 'My Doc',
      abstract: 'Intro line one line two.\n\nSecond paragraph.',
      sections: [{ title: 'Setup', text: 'Install it.' }],
    });
  });

  it('nests headings by level, relative to the shallowest', () => {
    const md = ['# Doc', 'abstract', '## A', 'a text', '### A1', 'a1 text', '### A2', '## B', 'b text'].join('\n');
    expect(parseMarkdown(md).sections).toEqual([
      { title: 'A', text: 'a text', sections: [{ title: 'A1', text: 'a1 text' }, { title: 'A2' }] },
      { title: 'B', text: 'b text' },
    ]);
  });

  it('nests a heading that skips levels under the nearest shallower heading', () => {
    const md = '# Doc\n\n## A\n\n#### Deep\n\ndeep text\n\n### Mid\n\n## B\n';
    const { sections } = parseMarkdown(md);
    expect(sections).toEqual([{ title: 'A', sections: [{ title: 'Deep', text: 'deep text' }, { title: 'Mid' }] }, { title: 'B' }]);
  });

  it('treats every heading as a section when there is more than one H1', () => {
    const md = 'lead text\n\n# One\n\none\n\n# Two\n\n## Two.a\n';
    expect(parseMarkdown(md, 'Given')).toEqual({
      title: 'Given',
      abstract: 'lead text',
      sections: [
        { title: 'One', text: 'one' },
        { title: 'Two', sections: [{ title: 'Two.a' }] },
      ],
    });
    expect(() => parseMarkdown(md)).toThrow(new IngestError('markdown', 'missing title'));
  });

  it('does not take an H1 as the title when another heading comes first', () => {
    expect(() => parseMarkdown('## Intro\n\n# Title\n')).toThrow('missing title');
  });

  it('keeps an H1 as a section when a different title is given, drops it when it repeats the title', () => {
    expect(parseMarkdown('# Guide\n\ntext\n\n## Part\n', 'Other').sections).toEqual([{ title: 'Guide', text: 'text', sections: [{ title: 'Part' }] }]);
    expect(parseMarkdown('# Guide\n\ntext\n\n## Part\n', 'Guide')).toEqual({
      title: 'Guide',
      abstract: 'text',
      sections: [{ title: 'Part' }],
    });
  });

  it('reads setext headings', () => {
    const md = 'Title\n=====\n\nabstract here\n\nPart one\n--------\n\nbody\n';
    expect(parseMarkdown(md)).toEqual({ title: 'Title', abstract: 'abstract here', sections: [{ title: 'Part one', text: 'body' }] });
  });

  it('strips closing #s, link markup and extra spaces from heading text', () => {
    const md = '#   Spaced   Title ##\n\nx\n\n## See [the API](api.md) #\n\n## C#\n';
    expect(parseMarkdown(md)).toEqual({
      title: 'Spaced Title',
      abstract: 'x',
      sections: [{ title: 'See the API' }, { title: 'C#' }],
    });
  });

  it('never reads a heading inside a fenced code block', () => {
    const md = '# Doc\n\n## Code\n\n```bash\n# not a heading\necho hi\n```\n\n~~~\n## nor this\n~~~\n\nafter\n';
    // Code blocks come fenced (```), for the splitter to keep each whole.
    expect(parseMarkdown(md).sections).toEqual([{ title: 'Code', text: '```\n# not a heading\necho hi\n```\n\n```\n## nor this\n```\n\nafter' }]);
  });

  it('does not read "#tag" (no space) or an indented-too-far # as a heading', () => {
    expect(parseMarkdown('# Doc\n\n#tag line\n    # code\n').abstract).toBe('#tag line # code');
  });

  it('merges the text of an empty heading into the section before it, with a warning naming its line', () => {
    expect(parseMarkdown('# Doc\n\ntext\n\n##\n\nmore\n')).toEqual({
      title: 'Doc',
      abstract: 'text\n\nmore',
      sections: [],
      warnings: ['the heading at line 5 is empty: its text is read as part of the section before it'],
    });
    expect(parseMarkdown('# Doc\n\n## A\n\na\n\n## ##\n\n### B\n\nb\n', undefined, 'file.md')).toEqual({
      title: 'Doc',
      abstract: '',
      sections: [{ title: 'A', text: 'a', sections: [{ title: 'B', text: 'b' }] }],
      warnings: ['the heading at line 7 is empty: its text is read as part of the section before it'],
    });
  });

  it('titles a heading that reads as markup only by its source (a Perl POD page: `### <CR>`), with a warning', () => {
    const md = '# perlfaq\n\n## Keys\n\n### <CR>\n\nThe return key.\n\n### <!-- note --> <Tab>\n\nThe tab key.\n\n## <!-- only a comment -->\n\ntail\n';
    expect(parseMarkdown(md)).toEqual({
      title: 'perlfaq',
      abstract: '',
      sections: [
        {
          title: 'Keys',
          sections: [
            { title: '<CR>', text: 'The return key.' },
            { title: '<Tab>', text: 'The tab key.\n\ntail' },
          ],
        },
      ],
      warnings: [
        'the heading at line 5 has no text once its markup is read: titled by its source, "<CR>"',
        'the heading at line 9 has no text once its markup is read: titled by its source, "<Tab>"',
        'the heading at line 13 is empty: its text is read as part of the section before it',
      ],
    });
  });

  it('titles a heading holding only an image by its alt text and one holding only code by the code, without a warning', () => {
    expect(parseMarkdown('# D\n\n## ![Logo](logo.png)\n\na\n\n## `run()`\n\nb\n')).toEqual({
      title: 'D',
      abstract: '',
      sections: [
        { title: 'Logo', text: 'a' },
        { title: '`run()`', text: 'b' },
      ],
    });
  });

  it('throws "missing title" when there is no heading and no title', () => {
    expect(() => parseMarkdown('just text')).toThrow('missing title');
    expect(parseMarkdown('just text', 'T')).toEqual({ title: 'T', abstract: 'just text', sections: [] });
  });

  it('drops thematic breaks but keeps text around them', () => {
    expect(parseMarkdown('# D\n\none\n\n---\n\ntwo\n').abstract).toBe('one\n\ntwo');
  });
});

describe('parseMarkdown: what real Markdown carries besides words (markdown-it)', () => {
  it('drops HTML comments and link-reference definitions, and resolves reference links from them', () => {
    const md = [
      '# Guide',
      '',
      '<!-- generated by tool v0.3.3 -->',
      'See [the setup][setup] and <!-- inline note -->the [API][].',
      '',
      '[setup]: docs/setup.md "Setup"',
      '[API]: https://example.org/api',
      '',
      '## Install',
      '',
      '<!--',
      'a comment',
      'over lines',
      '-->',
      'Run it.',
      '',
    ].join('\n');
    expect(parseMarkdown(md)).toEqual({
      title: 'Guide',
      abstract: 'See [the setup](docs/setup.md) and the [API](https://example.org/api).',
      sections: [{ title: 'Install', text: 'Run it.' }],
    });
  });

  it('keeps lists an item a line, tables a row a line, the words of HTML blocks, and drops emphasis markers', () => {
    const md = [
      '# T',
      '',
      '## Parts',
      '',
      '1. **first** step',
      '2. second',
      '   - nested _item_',
      '',
      '| Port | Depth |',
      '|---|---|',
      '| Oslo | 12 m |',
      '',
      '<div class="note">Mind <b>the</b> gap</div>',
      '',
    ].join('\n');
    expect(parseMarkdown(md).sections).toEqual([
      { title: 'Parts', text: '1. first step\n2. second\n  - nested item\n\nPort | Depth\nOslo | 12 m\n\nMind the gap' },
    ]);
  });

  it('keeps a fenced code block whole, blank lines included, and code spans in backticks', () => {
    const md = '# T\n\n## Code\n\nCall `run()`:\n\n```js\nconst a = 1;\n\nrun(a);\n```\n';
    expect(parseMarkdown(md).sections).toEqual([{ title: 'Code', text: 'Call `run()`:\n\n```\nconst a = 1;\n\nrun(a);\n```' }]);
  });

  it('fences an indented code block too, with a fence longer than any backtick run in it', () => {
    const md = '# T\n\n## Code\n\nShell:\n\n    echo ```x```\n    ls\n';
    expect(parseMarkdown(md).sections).toEqual([{ title: 'Code', text: 'Shell:\n\n````\necho ```x```\nls\n````' }]);
  });
});

describe('findMarkdownTitle', () => {
  it('finds the lone leading H1, else null', () => {
    expect(findMarkdownTitle('\n# Hello  World\n\n## a\n')).toBe('Hello World');
    expect(findMarkdownTitle('## a\n# b\n')).toBeNull();
    expect(findMarkdownTitle('# a\n# b\n')).toBeNull();
    expect(findMarkdownTitle('no heading')).toBeNull();
    expect(findMarkdownTitle('```\n# fenced\n```\n')).toBeNull();
  });
});
