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
    const md = [
      '# Doc', 'abstract',
      '## A', 'a text',
      '### A1', 'a1 text',
      '### A2',
      '## B', 'b text',
    ].join('\n');
    expect(parseMarkdown(md).sections).toEqual([
      { title: 'A', text: 'a text', sections: [{ title: 'A1', text: 'a1 text' }, { title: 'A2' }] },
      { title: 'B', text: 'b text' },
    ]);
  });

  it('nests a heading that skips levels under the nearest shallower heading', () => {
    const md = '# Doc\n\n## A\n\n#### Deep\n\ndeep text\n\n### Mid\n\n## B\n';
    const { sections } = parseMarkdown(md);
    expect(sections).toEqual([
      { title: 'A', sections: [{ title: 'Deep', text: 'deep text' }, { title: 'Mid' }] },
      { title: 'B' },
    ]);
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
    expect(parseMarkdown('# Guide\n\ntext\n\n## Part\n', 'Other').sections).toEqual([
      { title: 'Guide', text: 'text', sections: [{ title: 'Part' }] },
    ]);
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
    expect(parseMarkdown(md).sections).toEqual([{ title: 'Code', text: '# not a heading\necho hi\n\n## nor this\n\nafter' }]);
  });

  it('does not read "#tag" (no space) or an indented-too-far # as a heading', () => {
    expect(parseMarkdown('# Doc\n\n#tag line\n    # code\n').abstract).toBe('#tag line # code');
  });

  it('reports an empty heading with its line', () => {
    expect(() => parseMarkdown('# Doc\n\ntext\n\n##\n\nmore\n')).toThrow(
      new IngestError('Doc', 'section without a title (heading at line 5)'),
    );
    expect(() => parseMarkdown('# Doc\n\n## ##\n', undefined, 'file.md')).toThrow(
      new IngestError('file.md', 'section without a title (heading at line 3)'),
    );
  });

  it('throws "missing title" when there is no heading and no title', () => {
    expect(() => parseMarkdown('just text')).toThrow('missing title');
    expect(parseMarkdown('just text', 'T')).toEqual({ title: 'T', abstract: 'just text', sections: [] });
  });

  it('drops thematic breaks but keeps text around them', () => {
    expect(parseMarkdown('# D\n\none\n\n---\n\ntwo\n').abstract).toBe('one\n\ntwo');
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
