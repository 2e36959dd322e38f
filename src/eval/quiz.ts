/**
 * bsdgames `quiz` data files: one `question:answer` line per item. Each field is a pattern with
 * `|` alternatives, `{optional}` parts and `[a|b]` groups (used for accents: `Yaound['e|e'|e]`).
 * Pure: text in, items out.
 */

type Item = string | { optional: Alternatives } | { oneOf: Alternatives };
type Sequence = Item[];
type Alternatives = Sequence[];

export interface QuizItem {
  /** The first field's readable form: first alternative, optional parts included, plain letters in groups. */
  prompt: string;
  /** Every form of the second field (capped), for answer matching. */
  answers: string[];
  /** Every form of the first field (capped), for name matching. */
  prompts: string[];
}

const MAX_FORMS = 64;

function parse(pattern: string): Alternatives {
  let i = 0;
  const alternatives = (close: string | null): Alternatives => {
    const alts: Alternatives = [[]];
    while (i < pattern.length) {
      const c = pattern[i];
      if (close !== null && c === close) {
        i++;
        return alts;
      }
      i++;
      if (c === '\\' && i < pattern.length) alts[alts.length - 1].push(pattern[i++]);
      else if (c === '|') alts.push([]);
      else if (c === '{') alts[alts.length - 1].push({ optional: alternatives('}') });
      else if (c === '[') alts[alts.length - 1].push({ oneOf: alternatives(']') });
      else alts[alts.length - 1].push(c);
    }
    return alts;
  };
  return alternatives(null);
}

function expand(alts: Alternatives): string[] {
  const out: string[] = [];
  for (const seq of alts) {
    let forms = [''];
    for (const item of seq) {
      const options = typeof item === 'string' ? [item] : 'optional' in item ? ['', ...expand(item.optional)] : expand(item.oneOf);
      forms = forms.flatMap((f) => options.map((o) => f + o)).slice(0, MAX_FORMS);
    }
    out.push(...forms);
  }
  return [...new Set(out)].slice(0, MAX_FORMS);
}

/** The readable form: the first alternative, optional parts included, in groups the first alternative of plain letters. */
function plain(alts: Alternatives): string {
  const letters = (s: string) => /^[\p{L} ]*$/u.test(s);
  const seqText = (seq: Sequence): string =>
    seq
      .map((item) => {
        if (typeof item === 'string') return item;
        if ('optional' in item) return seqText(item.optional[0]);
        const texts = item.oneOf.map(seqText);
        return texts.find((t) => t !== '' && letters(t)) ?? texts[0];
      })
      .join('');
  return seqText(alts[0]).trim();
}

/** Split a line at the colons outside groups. */
function fields(line: string): string[] {
  const out = [''];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\' && i + 1 < line.length) {
      out[out.length - 1] += c + line[++i];
      continue;
    }
    if (c === '{' || c === '[') depth++;
    if (c === '}' || c === ']') depth--;
    if (c === ':' && depth === 0) out.push('');
    else out[out.length - 1] += c;
  }
  return out;
}

export function parseQuiz(text: string): QuizItem[] {
  const items: QuizItem[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const [question, answer] = fields(line);
    if (question === undefined || answer === undefined) continue;
    const q = parse(question);
    items.push({ prompt: plain(q), prompts: expand(q).map((s) => s.trim()), answers: expand(parse(answer)).map((s) => s.trim()) });
  }
  return items;
}
