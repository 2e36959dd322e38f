import { splitPassages, splitSentences } from './splitter';
import { prng } from '../../test/helpers/prng';

const words = (s: string): string[] => s.split(/\s+/).filter(Boolean);

describe('splitSentences', () => {
  it('ends sentences at . ! ? followed by whitespace', () => {
    expect(splitSentences('One two. Three four! Five six? Seven')).toEqual(['One two.', 'Three four!', 'Five six?', 'Seven']);
  });

  it('keeps closing quotes and brackets with the sentence', () => {
    expect(splitSentences('He said "Stop." Then he left. (See above.) Next.')).toEqual(['He said "Stop."', 'Then he left.', '(See above.)', 'Next.']);
  });

  it('does not split on abbreviations, initials or decimals', () => {
    expect(splitSentences('Dr. Smith met Mr. Jones in the U.S. Army, e.g. at noon. Pi is 3.14 today. J. R. R. Tolkien wrote, i.e. much. End.')).toEqual([
      'Dr. Smith met Mr. Jones in the U.S. Army, e.g. at noon.',
      'Pi is 3.14 today.',
      'J. R. R. Tolkien wrote, i.e. much.',
      'End.',
    ]);
  });

  it('ends a sentence after "etc." only before a capitalized word', () => {
    expect(splitSentences('Apples, pears, etc. and more. Apples etc. Then more.')).toEqual(['Apples, pears, etc. and more.', 'Apples etc.', 'Then more.']);
  });

  it('ends a sentence at a paragraph break (blank line)', () => {
    expect(splitSentences('A heading like line\n\nThen a paragraph\nwith a line break.')).toEqual([
      'A heading like line',
      'Then a paragraph with a line break.',
    ]);
  });

  it('reads a blank line holding spaces or tabs as a paragraph break, and other whitespace between line breaks not', () => {
    expect(splitSentences('one\n \t\r\ntwo\n\n\nthree\u00a0\n\nfour')).toEqual(['one', 'two', 'three', 'four']);
    // A no-break space is not blank-line whitespace (PARAGRAPH_BREAK), nor is a form feed alone between words.
    expect(splitSentences('one\n\u00a0\ntwo\fthree')).toEqual(['one two three']);
  });
});

describe('splitPassages', () => {
  it('returns nothing for empty or whitespace text', () => {
    expect(splitPassages('', 5)).toEqual([]);
    expect(splitPassages(' \n\t \n', 5)).toEqual([]);
  });

  it('rejects maxWords below 1 or not an integer', () => {
    expect(() => splitPassages('a b', 0)).toThrow(RangeError);
    expect(() => splitPassages('a b', -3)).toThrow(RangeError);
    expect(() => splitPassages('a b', 1.5)).toThrow(RangeError);
    expect(() => splitPassages('a b', NaN)).toThrow(RangeError);
  });

  it('packs whole sentences greedily', () => {
    const blocks = splitPassages('One two three. Four five six. Seven eight.', 6);
    expect(blocks.map((b) => b.text)).toEqual(['One two three. Four five six.', 'Seven eight.']);
    expect(blocks.map((b) => b.wordCount)).toEqual([6, 2]);
  });

  it('breaks between sentences rather than filling a block mid-sentence', () => {
    // 3 + 4 words with a limit of 5: the second sentence starts a new block.
    const blocks = splitPassages('Alpha beta gamma. Delta epsilon zeta eta.', 5);
    expect(blocks.map((b) => b.text)).toEqual(['Alpha beta gamma.', 'Delta epsilon zeta eta.']);
  });

  it('cuts a sentence longer than maxWords into chunks of maxWords', () => {
    const blocks = splitPassages('Short one. a b c d e f g. Tail here.', 3);
    expect(blocks.map((b) => b.text)).toEqual(['Short one.', 'a b c', 'd e f', 'g.', 'Tail here.']);
  });

  it('cuts an abbreviation-bearing sentence as one sentence', () => {
    // Were "Mr." a sentence end, the blocks would be ["Mr."], ["Smith went home today."].
    expect(splitPassages('Mr. Smith went home today.', 4).map((b) => b.text)).toEqual(['Mr. Smith went home', 'today.']);
  });

  it('normalizes whitespace and reports offsets into the input', () => {
    const text = '  First   line\nstill first.\n\n  Second\tone.  ';
    const blocks = splitPassages(text, 3);
    expect(blocks).toEqual([
      { text: 'First line still', wordCount: 3, start: 2, end: 20 },
      { text: 'first.', wordCount: 1, start: 21, end: 27 },
      { text: 'Second one.', wordCount: 2, start: 31, end: 42 },
    ]);
    for (const b of blocks) expect(text.slice(b.start, b.end).replace(/\s+/g, ' ')).toBe(b.text);
  });

  it('keeps every word once, in order, in blocks within the limit (property loop)', () => {
    const random = prng(20240607);
    const vocab = ['alpha', 'beta', 'Gamma', 'delta.', 'end!', 'why?', 'Dr.', 'e.g.', '3.5', 'U.S.', '"quoted."', 'x', 'etc.', '(aside.)'];
    const gaps = [' ', ' ', ' ', '  ', '\n', '\n\n', '\t', ' \n \n '];
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(random() * 60);
      let text = random() < 0.5 ? '' : ' ';
      for (let i = 0; i < n; i++) {
        text += vocab[Math.floor(random() * vocab.length)] + gaps[Math.floor(random() * gaps.length)];
      }
      const maxWords = 1 + Math.floor(random() * 12);
      const blocks = splitPassages(text, maxWords);
      const sentenceEnds = new Set<number>();
      let count = 0;
      for (const s of splitSentences(text)) sentenceEnds.add((count += words(s).length));

      expect(blocks.flatMap((b) => b.text.split(' '))).toEqual(words(text));
      let seen = 0;
      let lastEnd = 0;
      for (const b of blocks) {
        expect(b.wordCount).toBeGreaterThan(0);
        expect(b.wordCount).toBeLessThanOrEqual(maxWords);
        expect(b.text.split(' ')).toHaveLength(b.wordCount);
        expect(b.start).toBeGreaterThanOrEqual(lastEnd);
        expect(text.slice(b.start, b.end).replace(/\s+/g, ' ')).toBe(b.text);
        lastEnd = b.end;
        seen += b.wordCount;
        // A block ends at a sentence end unless it is a full chunk of a cut sentence.
        if (!sentenceEnds.has(seen)) expect(b.wordCount).toBe(maxWords);
      }
    }
  });

  it('with a token budget, every block fits it or is one word, and words still go in once, in order (property loop)', () => {
    const random = prng(20261123);
    const vocab = ['alpha', 'beta', 'Gamma', 'delta.', 'end!', 'why?', 'supercalifragilistic', 'x', 'etc.', 'internationalization.'];
    // A made-up tokenizer: one token per 4 characters of a word, at least one (not additive over
    // sentences in any special way, like a real subword tokenizer).
    const count = (t: string) => words(t).reduce((n, w) => n + Math.max(1, Math.ceil(w.length / 4)), 0);
    for (let round = 0; round < 300; round++) {
      const n = Math.floor(random() * 80);
      let text = '';
      for (let i = 0; i < n; i++) text += vocab[Math.floor(random() * vocab.length)] + (random() < 0.9 ? ' ' : '\n\n');
      const maxWords = 1 + Math.floor(random() * 30);
      const maxTokens = 1 + Math.floor(random() * 20);
      const blocks = splitPassages(text, maxWords, (b) => count(b) <= maxTokens);
      expect(blocks.flatMap((b) => b.text.split(' ')).filter(Boolean)).toEqual(words(text));
      for (const b of blocks) {
        expect(b.wordCount).toBeLessThanOrEqual(maxWords);
        if (b.wordCount > 1) expect(count(b.text)).toBeLessThanOrEqual(maxTokens);
      }
      // A budget only ever adds cuts.
      const unbounded = splitPassages(text, maxWords);
      expect(blocks.length).toBeGreaterThanOrEqual(unbounded.length);
    }
  });

  it('a budget every block meets changes nothing', () => {
    const text = 'One sentence here. Another one follows it. And a third, longer than the others by far.';
    expect(splitPassages(text, 5, () => true)).toEqual(splitPassages(text, 5));
  });

  describe('fenced code blocks', () => {
    const code = (lines: string[]): string => '```\n' + lines.join('\n') + '\n```';
    const wordsOfCode = (lines: string[]): string[] => lines.flatMap(words);

    it('keeps a code block whole, with its line breaks and indentation, moving it to the next passage rather than cutting it', () => {
      const lines = ['def f(x):', '    return x + 1', '', 'print(f(2))'];
      const text = `One two three four five.\n\n${code(lines)}\n\nAfter it.`;
      const blocks = splitPassages(text, 10);
      // 5 prose words + 7 code words would exceed 10: the code opens the next passage, whole.
      expect(blocks.map((b) => b.text)).toEqual(['One two three four five.', 'def f(x):\n    return x + 1\n\nprint(f(2))\nAfter it.']);
      expect(blocks.map((b) => b.wordCount)).toEqual([5, 9]);
    });

    it('joins a code block to the passage being packed when it fits there', () => {
      const text = `Run this:\n\n${code(['make test'])}`;
      expect(splitPassages(text, 100)).toEqual([{ text: 'Run this:\nmake test', wordCount: 4, start: 0, end: text.lastIndexOf('test') + 4 }]);
    });

    it('splits a code block longer than a passage at line boundaries only, into passages of its own', () => {
      const lines = Array.from({ length: 12 }, (_, i) => `line${i} a b`); // 3 words a line, 36 in all
      const blocks = splitPassages(`Intro words here.\n\n${code(lines)}\n\nOutro.`, 10);
      expect(blocks[0].text).toBe('Intro words here.');
      const codeBlocks = blocks.slice(1, -1);
      for (const b of codeBlocks) {
        expect(b.wordCount).toBeLessThanOrEqual(10);
        for (const l of b.text.split('\n')) expect(lines).toContain(l); // whole lines only
      }
      expect(codeBlocks.map((b) => b.text.split('\n').length)).toEqual([3, 3, 3, 3]);
      expect(codeBlocks.flatMap((b) => words(b.text))).toEqual(wordsOfCode(lines));
      expect(blocks[blocks.length - 1].text).toBe('Outro.');
    });

    it('cuts a single code line longer than a passage at words, as a long sentence', () => {
      const blocks = splitPassages(code(['a b c d e f g', 'h']), 3);
      expect(blocks.map((b) => b.text)).toEqual(['a b c', 'd e f', 'g', 'h']);
    });

    it('reads an unclosed fence, and a fence closed by a different run, as text', () => {
      expect(splitPassages('```\nx = 1\ny = 2', 100).map((b) => b.text)).toEqual(['``` x = 1 y = 2']);
      expect(splitPassages('````\nx\n```', 100).map((b) => b.text)).toEqual(['```` x ```']);
    });

    it('keeps a code block within a token budget, cutting at lines', () => {
      const lines = ['alpha beta', 'gamma delta', 'epsilon zeta'];
      const blocks = splitPassages(code(lines), 100, (b) => words(b).length <= 4);
      expect(blocks.map((b) => b.text)).toEqual(['alpha beta\ngamma delta', 'epsilon zeta']);
    });
  });
});
