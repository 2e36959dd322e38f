import { documentSummary, passageEncodingText } from './summary';

describe('documentSummary', () => {
  it('is "title, abstract, toc" with the toc in the given (pre-order) order', () => {
    expect(documentSummary('Germany', 'A country in Europe.', ['Geography', 'Area', 'Government', 'Capital'])).toBe(
      'Germany, A country in Europe., Geography, Area, Government, Capital',
    );
  });

  it('leaves out empty parts, so no ", ," appears', () => {
    expect(documentSummary('Doc', '', ['A', 'B'])).toBe('Doc, A, B');
    expect(documentSummary('Doc', 'Abstract.', [])).toBe('Doc, Abstract.');
    expect(documentSummary('Doc', '  ', [' ', 'A'])).toBe('Doc, A');
    expect(documentSummary('Doc', '', [])).toBe('Doc');
  });

  it('puts the abstract on one line', () => {
    expect(documentSummary('Doc', 'Para one.\n\nPara  two.', ['S'])).toBe('Doc, Para one. Para two., S');
  });
});

describe('passageEncodingText', () => {
  it('prefixes the passage with its title path', () => {
    expect(passageEncodingText({ titlePath: ['Doc', 'Section', 'Subsection'], text: 'passage text' })).toBe('Doc, Section, Subsection, passage text');
    expect(passageEncodingText({ titlePath: ['Doc'], text: 'abstract text' })).toBe('Doc, abstract text');
  });
});
