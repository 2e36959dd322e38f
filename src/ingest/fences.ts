/**
 * Code blocks inside section text. The format parsers (Markdown, HTML, reST) hand a code block to
 * the splitter between fence lines (```), as Markdown writes it, so the splitter can keep it whole
 * and keep its line breaks; link extraction already leaves fenced text alone (a code span).
 * A caller's own text (JSON, plain text) may use the same fences.
 */

/** A fenced block: offsets of the whole block (fences included) and of its code. */
export interface FencedBlock {
  start: number;
  end: number;
  codeStart: number;
  codeEnd: number;
}

/** `code` between fences longer than any run of backticks in it, so no line of it closes the block. */
export function fenceCode(code: string): string {
  let longest = 2;
  for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${code}\n${fence}`;
}

const OPENING = /^(`{3,})[^`]*$/;

/**
 * The fenced blocks of `text`, in order: an opening line of three or more backticks (an info
 * string may follow), up to a line of the same backticks alone. An opening line that never
 * closes is text. Linear: a fence length found unclosed once is not searched for again.
 */
export function findFences(text: string): FencedBlock[] {
  const lines: Array<{ text: string; start: number }> = [];
  for (let at = 0; at <= text.length; ) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    lines.push({ text: text.slice(at, end), start: at });
    at = end + 1;
  }
  const blocks: FencedBlock[] = [];
  const unclosed = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    const open = OPENING.exec(lines[i].text);
    if (!open || unclosed.has(open[1].length)) continue;
    const closing = new RegExp(`^${open[1]}[ \\t]*$`);
    let j = i + 1;
    while (j < lines.length && !closing.test(lines[j].text)) j++;
    if (j === lines.length) {
      unclosed.add(open[1].length);
      continue;
    }
    const codeStart = i + 1 < j ? lines[i + 1].start : lines[j].start;
    const codeEnd = i + 1 < j ? lines[j - 1].start + lines[j - 1].text.length : codeStart;
    blocks.push({ start: lines[i].start, end: lines[j].start + lines[j].text.length, codeStart, codeEnd });
    i = j;
  }
  return blocks;
}

/** `text` with each fenced block replaced by its code: for the abstract a document shows and summarizes. */
export function stripFences(text: string): string {
  let out = '';
  let at = 0;
  for (const block of findFences(text)) {
    out += text.slice(at, block.start) + text.slice(block.codeStart, block.codeEnd);
    at = block.end;
  }
  return out + text.slice(at);
}
