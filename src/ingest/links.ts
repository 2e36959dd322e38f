/**
 * Link extraction: Markdown `[anchor](target)` and wiki `[[Target|anchor]]` links become their
 * anchor text, so passages read (and embed) as prose, while the links are kept with the offsets
 * of their anchors in the cleaned text — the splitter's offsets then tell which passage holds each.
 */

export interface ExtractedLink {
  /** Target as written (trimmed); a Markdown link's optional "title" is dropped. */
  target: string;
  /** Anchor text, trimmed, inner whitespace collapsed to single spaces. */
  anchorText: string;
  /** Offset of the (trimmed) anchor in the cleaned text. */
  start: number;
  /** Offset just past it. */
  end: number;
}

export interface LinkExtraction {
  text: string;
  links: ExtractedLink[];
}

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
const SPECIAL = /[\\`![]/g;
/**
 * Longest anchor, target and title looked for: real links are far shorter, and the bounds keep
 * text full of unmatched brackets linear instead of quadratic.
 */
const MAX_ANCHOR = 1000;
const MAX_TARGET = 2048;

interface InlineLink {
  anchor: string;
  target: string;
  /** Offset just past the link's closing `)`. */
  end: number;
}

/** Offset just past the code span opening at `i` (a run of backticks), or -1 when it never closes. */
function codeSpanEnd(text: string, i: number): number {
  let n = 0;
  while (text[i + n] === '`') n++;
  let j = i + n;
  while (j < text.length) {
    const at = text.indexOf('`', j);
    if (at < 0) return -1;
    let m = 0;
    while (text[at + m] === '`') m++;
    if (m === n) return at + m;
    j = at + m;
  }
  return -1;
}

/** Index of the `]` closing the `[` at `i` (nesting allowed, escapes skipped), or -1. */
function closingBracket(text: string, i: number): number {
  if (text.slice(0, i + MAX_ANCHOR).indexOf(']', i) < 0) return -1; // fast path: nothing can close it
  let depth = 0;
  const stop = Math.min(text.length, i + MAX_ANCHOR);
  for (let j = i; j < stop; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
    else if (c === '\n' && /^\n[ \t]*\n/.test(text.slice(j, j + 80))) return -1; // a link never spans paragraphs
  }
  return -1;
}

/** Parse `[anchor](target "title")` starting at the `[` at `i`. */
function parseInlineLink(text: string, i: number): InlineLink | null {
  const close = closingBracket(text, i);
  if (close < 0 || text[close + 1] !== '(') return null;
  if (text.slice(0, close + MAX_TARGET).indexOf(')', close + 2) < 0) return null; // fast path, as above
  let k = close + 2;
  const skipSpace = (): void => {
    while (k < text.length && /[ \t\n]/.test(text[k])) k++;
  };
  skipSpace();
  let target: string;
  if (text[k] === '<') {
    const gt = text.slice(0, k + MAX_TARGET).indexOf('>', k + 1);
    if (gt < 0 || text.slice(k + 1, gt).includes('\n')) return null;
    target = text.slice(k + 1, gt);
    k = gt + 1;
  } else {
    const from = k;
    let depth = 0;
    const stop = Math.min(text.length, k + MAX_TARGET);
    for (; k < stop; k++) {
      const c = text[k];
      if (c === '\\' && k + 1 < text.length) k++;
      else if (c === ' ' || c === '\t' || c === '\n' || c === '\r') break;
      else if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) break;
        depth--;
      }
    }
    target = text.slice(from, k);
  }
  skipSpace();
  const quote = text[k];
  if (quote === '"' || quote === "'" || quote === '(') {
    const closer = quote === '(' ? ')' : quote;
    const end = text.slice(0, k + MAX_TARGET).indexOf(closer, k + 1);
    if (end < 0) return null;
    k = end + 1;
    skipSpace();
  }
  if (text[k] !== ')') return null;
  return { anchor: text.slice(i + 1, close), target: target.trim(), end: k + 1 };
}

/** Replace link markup in `text` by anchor text; return the cleaned text and the links. */
export function extractLinks(text: string): LinkExtraction {
  let out = '';
  const links: ExtractedLink[] = [];
  const addAnchor = (anchor: string, target: string | null): void => {
    const lead = anchor.length - anchor.trimStart().length;
    const trimmed = anchor.trim();
    const start = out.length + lead;
    out += anchor;
    if (target) {
      links.push({ target, anchorText: trimmed.replace(/\s+/g, ' '), start, end: start + trimmed.length });
    }
  };

  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && ASCII_PUNCTUATION.test(text[i + 1])) {
      out += text.slice(i, i + 2); // an escaped bracket never opens a link
      i += 2;
    } else if (c === '`') {
      const end = codeSpanEnd(text, i);
      let n = 1;
      while (text[i + n] === '`') n++;
      const stop = end < 0 ? i + n : end; // code spans are copied verbatim
      out += text.slice(i, stop);
      i = stop;
    } else if (c === '!' && text[i + 1] === '[') {
      const image = parseInlineLink(text, i + 1);
      const stop = image ? image.end : i + 1; // images stay as written
      out += text.slice(i, stop);
      i = stop;
    } else if (c === '[' && text[i + 1] === '[') {
      const close = text.slice(0, i + MAX_ANCHOR).indexOf(']]', i + 2);
      const inner = close < 0 ? '' : text.slice(i + 2, close);
      const bar = inner.indexOf('|');
      const target = (bar < 0 ? inner : inner.slice(0, bar)).trim();
      if (close < 0 || !target || /[\n[\]]/.test(inner)) {
        out += c;
        i++;
        continue;
      }
      const anchor = bar < 0 ? '' : inner.slice(bar + 1).trim();
      addAnchor(anchor || target, target);
      i = close + 2;
    } else if (c === '[') {
      const link = parseInlineLink(text, i);
      if (!link) {
        out += c;
        i++;
        continue;
      }
      addAnchor(link.anchor, link.target);
      i = link.end;
    } else {
      // Copy plain text up to the next character that may start markup.
      SPECIAL.lastIndex = i + 1;
      const next = SPECIAL.exec(text);
      const stop = next ? next.index : text.length;
      out += text.slice(i, stop);
      i = stop;
    }
  }
  return { text: out, links };
}
