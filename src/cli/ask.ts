import { styleText } from 'node:util';
import type { Config } from '../config';
import { RETRIEVE_DEFAULTS } from '../retrieval/defaults';
import { type ServerOptions, withTransport } from './transport';

export interface AskOptions extends ServerOptions {
  mode?: string;
  k1?: number;
  k2?: number;
  lambda?: number;
  alpha?: number;
  perDocument?: number;
  /** A token budget: print the context blocks a frontend would send its model instead of the passages. */
  context?: number;
  expand?: string;
  window?: number;
  json?: boolean;
}

/** One query whichever the transport (cli/transport.ts), so `dhr ask` shows what any client of the API would get. */
export const ASK_QUERY = `query Ask($q: String!, $mode: RetrievalMode, $k1: Int, $k2: Int, $lambda: Float, $alpha: Float, $perDocument: Int,
    $withContext: Boolean! = false, $tokens: Int = 1, $expand: ContextExpand, $window: Int) {
  retrieve(question: $q, mode: $mode, k1: $k1, k2: $k2, lambda: $lambda, alpha: $alpha, perDocument: $perDocument) {
    mode k1 k2 lambda alpha perDocument model warnings
    timings { totalMs }
    context(tokens: $tokens, expand: $expand, window: $window) @include(if: $withContext) {
      tokens budget truncated tokenizer
      blocks { rank score tokens titlePath text passageIds }
    }
    passages {
      rank score passageScore documentScore denseScore lexicalScore
      answer { text start end score sentence { text start end } }
      passage { id titlePath text document { id key title } }
    }
  }
}`;

interface AskPassage {
  rank: number;
  score: number;
  passageScore: number | null;
  documentScore: number | null;
  denseScore: number | null;
  lexicalScore: number | null;
  answer: { text: string; start: number; end: number; score: number; sentence: { text: string; start: number; end: number } } | null;
  passage: { id: string; titlePath: string[]; text: string; document: { id: string; key: string; title: string } };
}
interface AskContext {
  tokens: number;
  budget: number;
  truncated: number;
  tokenizer: string;
  blocks: { rank: number; score: number; tokens: number; titlePath: string[]; text: string; passageIds: string[] }[];
}
export interface AskResult {
  retrieve: {
    mode: string;
    k1: number;
    k2: number;
    lambda: number;
    alpha: number;
    perDocument: number | null;
    model: string;
    warnings: string[];
    timings: { totalMs: number };
    passages: AskPassage[];
    context?: AskContext;
  };
}

const num = (n: number | null) => (n === null ? '–' : n.toFixed(3));

/** The answer sentence, the answer span in it marked: bold on a terminal, **span** otherwise. */
function sentenceWithSpan(p: AskPassage, color: boolean): string {
  const a = p.answer;
  if (!a) return p.passage.text;
  const s = a.sentence;
  const inner = a.start - s.start;
  const before = s.text.slice(0, inner);
  const span = s.text.slice(inner, inner + (a.end - a.start));
  const after = s.text.slice(inner + (a.end - a.start));
  return `${before}${color ? styleText(['bold', 'underline'], span) : `**${span}**`}${after}`;
}

const headOf = (question: string, r: AskResult['retrieve']) =>
  `${question}\n${r.mode} · k1 ${r.k1} · k2 ${r.k2} · λ ${r.lambda} · alpha ${r.alpha}${r.perDocument !== null ? ` · ≤ ${r.perDocument} per document` : ''} · ${r.model} · ${r.timings.totalMs.toFixed(0)} ms\n`;

/** The context blocks as a frontend would send them: each under its title path, then its text whole. */
export function formatContext(question: string, r: AskResult['retrieve'], c: AskContext, color = false): string {
  const left = c.truncated > 0 ? ` · ${c.truncated} ranked passage(s) did not fit` : '';
  const head = `${headOf(question, r)}context: ${c.blocks.length} block(s), ${c.tokens} of ${c.budget} tokens (${c.tokenizer})${left}\n`;
  const blocks = c.blocks.map((b) => {
    const title = b.titlePath.join(' › ');
    const facts = `rank ${b.rank} · score ${num(b.score)} · ${b.passageIds.length} passage(s) · ${b.tokens} tokens`;
    return `[${b.rank}] ${color ? styleText('bold', title) : title}  (${facts})\n${b.text}`;
  });
  return `${head}\n${blocks.join('\n\n')}\n`;
}

/** What a person wants to read: title path, the answer in its sentence, the scores. */
export function formatAnswers(question: string, r: AskResult['retrieve'], color = false): string {
  const head = headOf(question, r);
  if (r.passages.length === 0) return `${head}\nno passages found\n`;
  const blocks = r.passages.map((p) => {
    const title = p.passage.titlePath.join(' › ');
    return [
      `${p.rank}. ${color ? styleText('bold', title) : title}`,
      `   ${sentenceWithSpan(p, color)}`,
      `   score ${num(p.score)} (passage ${num(p.passageScore)}, document ${num(p.documentScore)}; dense ${num(p.denseScore)}, BM25 ${num(p.lexicalScore)}; answer ${num(p.answer?.score ?? null)})`,
    ].join('\n');
  });
  return `${head}\n${blocks.join('\n\n')}\n`;
}

/** `dhr ask "question"`: the top answers from the local store, a running server (--url), or the server holding the store. */
export async function askCommand(config: Config, question: string, options: AskOptions): Promise<number> {
  // Options left out are left out of the variables, so the schema's defaults apply.
  const variables = Object.fromEntries(
    Object.entries({
      q: question,
      mode: options.mode,
      k1: options.k1,
      // Context is assembled from the ranked passages: retrieve's own default of 20 gives it material.
      k2: options.k2 ?? (options.context !== undefined ? RETRIEVE_DEFAULTS.k2 : 5),
      lambda: options.lambda,
      alpha: options.alpha,
      perDocument: options.perDocument,
      ...(options.context !== undefined ? { withContext: true, tokens: options.context, expand: options.expand, window: options.window } : {}),
    }).filter(([, v]) => v !== undefined),
  );
  // Refusals are thrown: dhr ask says the message alone (main.ts), exit code 1.
  return withTransport(config, options, 'ask', async (transport) => printAnswers(question, await transport.request<AskResult>(ASK_QUERY, variables), options), {
    encoders: true,
    answer: false,
  });
}

function printAnswers(question: string, result: AskResult, options: AskOptions): number {
  if (options.json) {
    console.log(JSON.stringify(result.retrieve, null, 2));
    return 0;
  }
  for (const w of result.retrieve.warnings) console.error(`warning: ${w}`);
  const color = process.stdout.isTTY === true;
  const context = result.retrieve.context;
  process.stdout.write(context ? formatContext(question, result.retrieve, context, color) : formatAnswers(question, result.retrieve, color));
  return 0;
}
