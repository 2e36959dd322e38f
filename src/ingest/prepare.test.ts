import { IngestError } from './errors';
import { prepareDocument, resolveIngestOptions } from './prepare';
import type { DocumentInput, SectionInput } from './types';

const tree: DocumentInput = {
  key: 'doc-1',
  title: '  The   Doc ',
  abstract: 'An abstract about [[Other Doc|another document]].',
  sections: [
    {
      title: 'A',
      text: 'Text of A.',
      sections: [{ title: 'A.1', text: 'Text of A.1.', sections: [{ title: 'A.1.x', text: 'Deepest text.' }] }, { title: 'A.2' }],
    },
    { title: 'B', text: 'Text of B.' },
  ],
  source: 'test',
  metadata: { b: 1, a: { y: 2, x: [1, 'two'] } },
};

/** The IngestError a call throws (fails the test when it throws nothing or something else). */
function ingestError(fn: () => unknown): IngestError {
  try {
    fn();
  } catch (e) {
    if (e instanceof IngestError) return e;
    throw e;
  }
  throw new Error('expected an IngestError');
}

describe('prepareDocument: title tree', () => {
  const doc = prepareDocument(tree);

  it('normalizes title, defaults and copies fields', () => {
    expect(doc.key).toBe('doc-1');
    expect(doc.title).toBe('The Doc');
    expect(doc.abstract).toBe('An abstract about another document.');
    expect(doc.source).toBe('test');
    expect(doc.metadata).toEqual({ b: 1, a: { y: 2, x: [1, 'two'] } });
    expect(doc.summary).toBe('The Doc, An abstract about another document., A, A.1, A.1.x, A.2, B');
  });

  it('flattens sections in pre-order with parents, depths, ordinals and title paths', () => {
    expect(doc.sections).toEqual([
      { position: 0, parentPosition: null, title: 'A', depth: 1, ordinal: 0, titlePath: ['The Doc', 'A'] },
      { position: 1, parentPosition: 0, title: 'A.1', depth: 2, ordinal: 0, titlePath: ['The Doc', 'A', 'A.1'] },
      { position: 2, parentPosition: 1, title: 'A.1.x', depth: 3, ordinal: 0, titlePath: ['The Doc', 'A', 'A.1', 'A.1.x'] },
      { position: 3, parentPosition: 0, title: 'A.2', depth: 2, ordinal: 1, titlePath: ['The Doc', 'A', 'A.2'] },
      { position: 4, parentPosition: null, title: 'B', depth: 1, ordinal: 1, titlePath: ['The Doc', 'B'] },
    ]);
  });

  it('puts abstract passages first, then each section text in pre-order', () => {
    expect(doc.passages).toEqual([
      {
        ordinal: 0,
        sectionPosition: null,
        text: 'An abstract about another document.',
        titlePath: ['The Doc'],
        wordCount: 5,
        links: [{ target: 'Other Doc', anchorText: 'another document' }],
      },
      { ordinal: 1, sectionPosition: 0, text: 'Text of A.', titlePath: ['The Doc', 'A'], wordCount: 3, links: [] },
      { ordinal: 2, sectionPosition: 1, text: 'Text of A.1.', titlePath: ['The Doc', 'A', 'A.1'], wordCount: 3, links: [] },
      { ordinal: 3, sectionPosition: 2, text: 'Deepest text.', titlePath: ['The Doc', 'A', 'A.1', 'A.1.x'], wordCount: 2, links: [] },
      { ordinal: 4, sectionPosition: 4, text: 'Text of B.', titlePath: ['The Doc', 'B'], wordCount: 3, links: [] },
    ]);
  });

  it('never lets a passage span two sections, even when both would fit', () => {
    const d = prepareDocument(
      {
        title: 'T',
        sections: [
          { title: 'S1', text: 'one two' },
          { title: 'S2', text: 'three' },
        ],
      },
      { maxWords: 100 },
    );
    expect(d.passages.map((p) => [p.sectionPosition, p.text])).toEqual([
      [0, 'one two'],
      [1, 'three'],
    ]);
  });

  it('splits long texts at maxWords and numbers passages document-wide', () => {
    const d = prepareDocument(
      { title: 'T', abstract: 'a1 a2 a3. a4 a5.', sections: [{ title: 'S', text: 'One two three. Four five six. Seven.' }] },
      { maxWords: 3 },
    );
    expect(d.passages.map((p) => [p.ordinal, p.sectionPosition, p.text])).toEqual([
      [0, null, 'a1 a2 a3.'],
      [1, null, 'a4 a5.'],
      [2, 0, 'One two three.'],
      [3, 0, 'Four five six.'],
      [4, 0, 'Seven.'],
    ]);
  });

  it('assigns each link to the passage holding its anchor', () => {
    const d = prepareDocument(
      {
        title: 'T',
        sections: [{ title: 'S', text: 'See [first](t1) here. Now [[t2|second link]] there. And [third](t3).' }],
      },
      { maxWords: 4 },
    );
    expect(d.passages.map((p) => ({ text: p.text, links: p.links.map((l) => l.target) }))).toEqual([
      { text: 'See first here.', links: ['t1'] },
      { text: 'Now second link there.', links: ['t2'] },
      { text: 'And third.', links: ['t3'] },
    ]);
    expect(d.passages[1].links[0].anchorText).toBe('second link');
  });

  it('defaults the key to the title, source to null and metadata to {}', () => {
    const d = prepareDocument({ title: 'Only', abstract: 'x', source: null, metadata: null } as unknown as DocumentInput);
    expect([d.key, d.source, d.metadata]).toEqual(['Only', null, {}]);
  });
});

describe('prepareDocument: markdown and text', () => {
  it('takes title, abstract and sections from Markdown', () => {
    const d = prepareDocument({ key: 'md', markdown: '# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n' });
    expect(d.title).toBe('Guide');
    expect(d.abstract).toBe('Intro.');
    expect(d.sections.map((s) => [s.title, s.depth, s.parentPosition])).toEqual([
      ['Install', 1, null],
      ['Linux', 2, 0],
    ]);
    expect(d.passages.map((p) => p.titlePath.join(' > '))).toEqual(['Guide', 'Guide > Install', 'Guide > Install > Linux']);
  });

  it('reports a Markdown error with the document label', () => {
    expect(ingestError(() => prepareDocument({ key: 'k', markdown: 'no title here' })).message).toBe('document "k": missing title');
  });

  it('ingests a Markdown page with an empty heading, its text merged into the section before it, and says so', () => {
    const d = prepareDocument({ key: 'k', markdown: '# T\n\n## A\n\na\n\n## \n\nx' });
    expect(d.sections.map((s) => s.title)).toEqual(['A']);
    expect(d.passages.map((p) => p.text)).toEqual(['a x']);
    expect(d.warnings).toEqual(['the heading at line 7 is empty: its text is read as part of the section before it']);
    expect(prepareDocument({ key: 'k', markdown: '# T\n\n## A\n\na\n' }).warnings).toBeUndefined();
  });

  it('uses plain text as the abstract', () => {
    const d = prepareDocument({ title: 'Plain', text: 'Para one.\r\n\r\nPara two.' });
    expect(d.abstract).toBe('Para one.\n\nPara two.');
    expect(d.sections).toEqual([]);
    expect(d.passages.map((p) => p.text)).toEqual(['Para one. Para two.']);
  });
});

describe('prepareDocument: code blocks', () => {
  it('keeps a Markdown code block whole in one passage, links in it untouched, and shows it unfenced in the abstract', () => {
    const prose = Array.from({ length: 19 }, (_, i) => `Sentence ${i} has five words.`).join(' '); // 95 words
    const code = ['```sh', 'curl [not](a-link) \\', '  --data x', 'done', '```'].join('\n');
    const doc = prepareDocument({ markdown: `# Doc\n\nIntro:\n\n${code}\n\n## Use\n\n${prose}\n\n${code}\n` });
    const use = doc.passages.filter((p) => p.titlePath[1] === 'Use');
    // 95 words + 6 of code is over 100: the code block moves whole to the next passage.
    expect(use.map((p) => p.wordCount)).toEqual([95, 6]);
    expect(use[1].text).toBe('curl [not](a-link) \\\n  --data x\ndone');
    expect(use[1].links).toEqual([]);
    expect(doc.abstract).toBe('Intro:\n\ncurl [not](a-link) \\\n  --data x\ndone');
  });

  it('changes the content hash of a document with code (it re-splits on re-ingest), and of no other', () => {
    // The hashes before code blocks were kept whole (commit f71b556).
    expect(prepareDocument({ key: 'plain', markdown: '# Doc\n\n## Part\n\nWords here.\n' }).contentHash).toBe(
      '701cbcb0b75a83c91213cc67b069a61a4625fc9384ae0b7a64f535b82fbb9ed3',
    );
    expect(prepareDocument({ key: 'code', markdown: '# Doc\n\n## Part\n\n```\nmake\n```\n' }).contentHash).not.toBe(
      '9ad311b9cc47c3a144baa77052194083f2d3c36fa309a6c96d3179fc2cfac63f',
    );
  });
});

describe('prepareDocument: bad input', () => {
  const cases: Array<[string, unknown, string]> = [
    ['missing title', { abstract: 'x' }, 'missing title'],
    ['blank title', { title: '  ', abstract: 'x' }, 'missing title'],
    [
      'untitled nested section',
      { title: 'T', sections: [{ title: 'a', text: 'x' }, { title: 'b' }, { title: 'c', sections: [{ text: 'y' }] }] },
      'section without a title at sections[2].sections[0]',
    ],
    ['blank section title', { title: 'T', sections: [{ title: ' \n ', text: 'x' }] }, 'section without a title at sections[0]'],
    [
      'empty document',
      { title: 'T', abstract: ' ', sections: [{ title: 'S', text: '\n' }, { title: 'S2' }] },
      'empty document: no text in abstract or sections',
    ],
    ['no content at all', { title: 'T' }, 'empty document: no text in abstract or sections'],
    ['lone surrogate', { title: 'T', abstract: 'bad \uD800 text' }, 'invalid UTF-8 / malformed Unicode in abstract'],
    ['lone surrogate in a section', { title: 'T', sections: [{ title: 'S', text: '\uDC00' }] }, 'invalid UTF-8 / malformed Unicode in sections[0].text'],
    ['lone surrogate in metadata', { title: 'T', abstract: 'x', metadata: { k: ['\uD800'] } }, 'invalid UTF-8 / malformed Unicode in metadata.k[0]'],
    ['NUL', { title: 'T', abstract: 'a\u0000b' }, 'NUL character (\\u0000) in abstract'],
    ['NUL in a title', { title: 'T\u0000', abstract: 'x' }, 'NUL character (\\u0000) in title'],
    ['metadata array', { title: 'T', abstract: 'x', metadata: [1] }, 'metadata must be a JSON object'],
    ['metadata string', { title: 'T', abstract: 'x', metadata: 'x' }, 'metadata must be a JSON object'],
    ['metadata Map', { title: 'T', abstract: 'x', metadata: new Map() }, 'metadata must be a JSON object'],
    ['metadata class instance', { title: 'T', abstract: 'x', metadata: new (class Meta {})() }, 'metadata must be a JSON object'],
    ['metadata not JSON', { title: 'T', abstract: 'x', metadata: { n: BigInt(1) } }, 'metadata is not JSON: Do not know how to serialize a BigInt'],
    ['source not a string', { title: 'T', abstract: 'x', source: 3 }, 'source must be a string'],
    ['empty key', { key: ' ', title: 'T', abstract: 'x' }, 'key must be a non-empty string'],
    ['sections not an array', { title: 'T', sections: { title: 'S' } }, 'sections must be an array'],
    ['section not an object', { title: 'T', sections: ['S'] }, 'sections[0] must be an object'],
    [
      'markdown with sections',
      { title: 'T', markdown: '# T', sections: [] },
      'conflicting content: give only one of abstract/sections, markdown, html, rst or text (got abstract/sections and markdown)',
    ],
    [
      'text with abstract',
      { title: 'T', text: 'x', abstract: 'y' },
      'conflicting content: give only one of abstract/sections, markdown, html, rst or text (got abstract/sections and text)',
    ],
    [
      'markdown with text',
      { title: 'T', text: 'x', markdown: 'y' },
      'conflicting content: give only one of abstract/sections, markdown, html, rst or text (got markdown and text)',
    ],
  ];

  it.each(cases)('%s', (_name, input, problem) => {
    const error = ingestError(() => prepareDocument(input as DocumentInput));
    expect(error.problem).toBe(problem);
  });

  it('rejects a document over the size limit, counting UTF-8 bytes', () => {
    // "é" is 2 bytes: title 1 + abstract 2 * 6 = 13 bytes.
    const input = { title: 'T', abstract: 'éééééé' };
    expect(prepareDocument(input, { maxDocumentBytes: 13 }).title).toBe('T');
    expect(ingestError(() => prepareDocument(input, { maxDocumentBytes: 12 })).problem).toBe('document is 13 bytes, over the limit of 12 bytes');
    const withMeta = { title: 'T', abstract: 'x', sections: [{ title: 'S', text: 'yy' }], metadata: { a: 1 } };
    // 1 + 1 + 1 + 2 + '{"a":1}'.length (7) = 12
    expect(ingestError(() => prepareDocument(withMeta, { maxDocumentBytes: 11 })).problem).toBe('document is 12 bytes, over the limit of 11 bytes');
  });

  it('bounds a source by its text, not its markup, and ingests text over the limit up to it, cut between characters', () => {
    // 8 × the limit of markup is read; its text, 1 + 2 * 8 bytes, is over 12: cut before a whole "é".
    const markup = `<h1>T</h1><p>${'<b>é</b>'.repeat(8)}</p>`;
    const doc = prepareDocument({ html: markup }, { maxDocumentBytes: 12 });
    expect(doc.passages.map((p) => p.text)).toEqual(['ééééé']);
    expect(doc.warnings).toEqual([
      'its text is 17 bytes, over the limit of 12 bytes (MAX_DOCUMENT_BYTES): ingested up to the limit, 0 of its 0 sections left out',
    ]);
    expect(prepareDocument({ html: markup }, { maxDocumentBytes: 17 }).warnings).toBeUndefined();
    expect(prepareDocument({ html: markup }, { maxDocumentBytes: 12 }).contentHash).not.toBe(
      prepareDocument({ html: markup }, { maxDocumentBytes: 13 }).contentHash,
    );
    expect(ingestError(() => prepareDocument({ html: markup }, { maxDocumentBytes: 6 })).problem).toBe(
      `html is ${Buffer.byteLength(markup)} bytes, over the limit of 48 bytes for a document's source (8 × MAX_DOCUMENT_BYTES)`,
    );
    // Sections in reading order: those that fit are kept whole, the rest left out.
    const sections = prepareDocument({ markdown: '# T\n\n## A\n\naaaa\n\n## B\n\nbbbb\n\n## C\n\ncccc' }, { maxDocumentBytes: 10 });
    expect(sections.sections.map((s) => s.title)).toEqual(['A', 'B']);
    expect(sections.passages.map((p) => p.text)).toEqual(['aaaa', 'bbb']);
    expect(sections.warnings).toEqual([expect.stringMatching(/1 of its 3 sections left out$/)]);
  });

  it('accepts null-prototype objects (as graphql-js builds input objects)', () => {
    const input = Object.assign(Object.create(null) as DocumentInput, { title: 'T', abstract: 'x' });
    input.metadata = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(prepareDocument(input).metadata).toEqual({ a: 1 });
  });

  it('rejects input that is not an object', () => {
    expect(ingestError(() => prepareDocument(null as unknown as DocumentInput, {}, '#3')).message).toBe('document "#3": a document must be a JSON object');
    expect(ingestError(() => prepareDocument([] as unknown as DocumentInput)).problem).toBe('a document must be a JSON object');
  });

  it('names the document by key, else title, else the label', () => {
    expect(ingestError(() => prepareDocument({ key: 'k', title: 'T' }, {}, 'f.jsonl:3')).document).toBe('k');
    expect(ingestError(() => prepareDocument({ title: 'T' }, {}, 'f.jsonl:3')).document).toBe('T');
    expect(ingestError(() => prepareDocument({ abstract: 'x' }, {}, 'f.jsonl:3')).message).toBe('document "f.jsonl:3": missing title');
  });

  it('rejects bad options with RangeError', () => {
    for (const bad of [
      { maxWords: 0 },
      { maxWords: 10_001 },
      { maxWords: 2.5 },
      { maxDocumentBytes: 0 },
      { maxDocumentBytes: -1 },
      { maxDocumentBytes: NaN },
    ]) {
      expect(() => prepareDocument({ title: 'T', abstract: 'x' }, bad)).toThrow(RangeError);
    }
    expect(resolveIngestOptions({ maxWords: 10_000 })).toEqual({ maxWords: 10_000, maxDocumentBytes: 2_000_000 });
    expect(resolveIngestOptions()).toEqual({ maxWords: 100, maxDocumentBytes: 2_000_000 });
  });
});

describe('prepareDocument: token budget', () => {
  // Counts words as tokens, so the expected split is checkable by hand.
  const wordsAsTokens = (maxTokens: number) => ({ id: `words:${maxTokens}`, maxTokens, count: (t: string) => t.split(/\s+/).filter(Boolean).length });

  it('splits passages so title path + text fit the budget, and every word stays', () => {
    const text = 'One two three four. Five six seven eight. Nine ten eleven twelve thirteen.';
    const doc = prepareDocument({ title: 'Doc', sections: [{ title: 'Sec', text }] }, { maxWords: 100, tokenBudget: wordsAsTokens(8) });
    const inSection = doc.passages.filter((p) => p.sectionPosition === 0);
    // "Doc, Sec, " costs 2 tokens, leaving 6 for text: sentences of 4, 4 and 5 words each go alone.
    expect(inSection.map((p) => p.text)).toEqual(['One two three four.', 'Five six seven eight.', 'Nine ten eleven twelve thirteen.']);
    const unbudgeted = prepareDocument({ title: 'Doc', sections: [{ title: 'Sec', text }] }, { maxWords: 100 });
    expect(unbudgeted.passages.filter((p) => p.sectionPosition === 0)).toHaveLength(1);
  });

  it('leaves half a budget of text when the title path alone is near the budget', () => {
    const long = Array.from({ length: 7 }, (_, i) => `w${i}`).join(' ');
    const doc = prepareDocument(
      { title: 'Doc', sections: [{ title: 'A very long heading indeed', text: long }] },
      { maxWords: 100, tokenBudget: wordsAsTokens(8) },
    );
    // The path costs 6 of 8 tokens; passages still get ceil(8 / 2) = 4 words, not 2.
    expect(doc.passages.filter((p) => p.sectionPosition === 0).map((p) => p.wordCount)).toEqual([4, 3]);
  });

  it('rejects a budget below one token', () => {
    expect(() => resolveIngestOptions({ tokenBudget: { id: 'x', maxTokens: 0, count: () => 0 } })).toThrow(RangeError);
  });
});

describe('prepareDocument: content hash', () => {
  const hash = (input: DocumentInput, maxWords = 100): string => prepareDocument(input, { maxWords }).contentHash;
  const base = hash(tree);

  it('is a sha256 hex digest, stable for the same input and metadata key order', () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(hash(structuredClone(tree))).toBe(base);
    expect(hash({ ...tree, metadata: { a: { x: [1, 'two'], y: 2 }, b: 1 } })).toBe(base);
  });

  it('changes with any content, key, source, metadata or maxWords change', () => {
    const changed: DocumentInput[] = [
      { ...tree, key: 'doc-2' },
      { ...tree, title: 'Another' },
      { ...tree, abstract: tree.abstract + ' More.' },
      { ...tree, sections: [{ ...tree.sections![0], text: 'Changed.' }, tree.sections![1]] },
      { ...tree, sections: [tree.sections![1], tree.sections![0]] },
      { ...tree, source: 'other' },
      { ...tree, metadata: { b: 2, a: { y: 2, x: [1, 'two'] } } },
    ];
    const hashes = new Set([base, ...changed.map((c) => hash(c))]);
    expect(hashes.size).toBe(changed.length + 1);
    expect(hash(tree, 50)).not.toBe(base);
  });

  it('changes with the token budget that passages were split for', () => {
    const budget = (id: string) => ({ id, maxTokens: 1000, count: (t: string) => t.length });
    const withBudget = (id: string) => prepareDocument(tree, { maxWords: 100, tokenBudget: budget(id) }).contentHash;
    expect(withBudget('a')).not.toBe(base);
    expect(withBudget('a')).toBe(withBudget('a'));
    expect(withBudget('b')).not.toBe(withBudget('a'));
  });

  it('differs between content forms carrying the same words', () => {
    expect(hash({ title: 'T', text: 'x' })).not.toBe(hash({ title: 'T', abstract: 'x' }));
  });
});

describe('prepareDocument: nesting bounds (checked before any recursive walk)', () => {
  /** Built iteratively: a recursive builder would itself overflow at these depths. */
  const deepSections = (levels: number) => {
    const root: SectionInput[] = [{ title: 'S1', text: 'leaf' }];
    let list = root;
    for (let i = 2; i <= levels; i++) {
      const next: SectionInput[] = [{ title: `S${i}`, text: 'leaf' }];
      list[0].sections = next;
      list = next;
    }
    return root;
  };
  const deepMetadata = (levels: number) => {
    const root: Record<string, unknown> = {};
    let node = root;
    for (let i = 1; i < levels; i++) node = (node.a = {}) as Record<string, unknown>;
    return root;
  };

  it('refuses sections 10,000 levels deep and metadata 5,000 levels deep with a message, not a stack overflow', () => {
    expect(ingestError(() => prepareDocument({ title: 'T', sections: deepSections(10_000) })).message).toContain(
      'sections are nested deeper than 64 levels (MAX_SECTION_DEPTH)',
    );
    expect(ingestError(() => prepareDocument({ title: 'T', text: 't', metadata: deepMetadata(5000) })).message).toContain(
      'metadata is nested deeper than 32 levels (MAX_METADATA_DEPTH)',
    );
  });

  it('takes what is at the bound, and the bounds are options', () => {
    expect(prepareDocument({ title: 'T', sections: deepSections(64) }).sections).toHaveLength(64);
    expect(prepareDocument({ title: 'T', text: 't', metadata: deepMetadata(32) }).metadata).toEqual(deepMetadata(32));
    expect(ingestError(() => prepareDocument({ title: 'T', sections: deepSections(3) }, { maxSectionDepth: 2 })).message).toContain('deeper than 2 levels');
    expect(ingestError(() => prepareDocument({ title: 'T', text: 't', metadata: { a: { b: 1 } } }, { maxMetadataDepth: 1 })).message).toContain(
      'deeper than 1 levels (MAX_METADATA_DEPTH)',
    );
  });
});
