/**
 * tokenizer.json through @huggingface/tokenizers, with the truncation that library does not do:
 * cut the text's tokens but keep the template's trailing special tokens (e.g. [SEP]).
 */
import type { Tokenizer } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };
import { EncoderError } from '../types';

// The package is ESM-typed but ships a CommonJS build under its "node"/"require" export; a static
// import from this CommonJS module is rejected by tsc (TS1479), so load it with require and borrow its types.
type TokenizersModule = typeof import('@huggingface/tokenizers', { with: { 'resolution-mode': 'import' } });
const tokenizers = require('@huggingface/tokenizers') as TokenizersModule;

export interface TokenizedText {
  ids: number[];
  /** Whether tokens were cut to fit the limit. */
  truncated: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class TextTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    /** Largest id the tokenizer can emit: must be a row of the model's embedding table. */
    readonly maxId: number,
    readonly maxIdToken: string,
    /** tokenizer.json's truncation.max_length: the length the model was exported for. */
    readonly maxLength: number | undefined,
    /** Id fed at padded positions; masked out, but it must still be a valid embedding row. */
    readonly padId: number,
    /** Special tokens the template appends after the text (1 for "[CLS] $A [SEP]"). */
    private readonly trailingSpecials: number,
  ) {}

  /** Parses tokenizer.json text; `file` and `model` name the source in errors. */
  static parse(text: string, file: string, model: string): TextTokenizer {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // JSON.parse's message quotes the text: never echo a file's content.
      throw new EncoderError(model, `${file} is not valid JSON`);
    }
    if (!isObject(json)) throw new EncoderError(model, `${file} must hold a JSON object`);
    let tokenizer: Tokenizer;
    try {
      // The second argument is tokenizer_config.json; nothing in it is needed for encoding.
      tokenizer = new tokenizers.Tokenizer({ added_tokens: [], ...json }, {});
    } catch (e) {
      throw new EncoderError(model, `${file} is not a tokenizer @huggingface/tokenizers can load: ${(e as Error).message}`);
    }
    let maxId = -1;
    let maxIdToken = '';
    for (const [token, id] of tokenizer.get_vocab(true)) {
      if (id > maxId) [maxId, maxIdToken] = [id, token];
    }
    if (maxId < 0) throw new EncoderError(model, `${file} has an empty vocabulary`);
    const truncation = json.truncation;
    const maxLength = isObject(truncation) && typeof truncation.max_length === 'number' && truncation.max_length > 0 ? truncation.max_length : undefined;
    return new TextTokenizer(tokenizer, maxId, maxIdToken, maxLength, padIdOf(json, tokenizer), trailingSpecialCount(tokenizer));
  }

  /** Token ids with the tokenizer's special tokens, at most `limit` of them. */
  encode(text: string, limit: number): TokenizedText {
    // Typed explicitly: the package's .d.ts imports its Encoding type without an extension, which
    // node16 resolution cannot follow, so it arrives as any.
    const ids: number[] = this.tokenizer.encode(text).ids;
    if (ids.length <= limit) return { ids, truncated: false };
    const tail = Math.min(this.trailingSpecials, limit);
    return { ids: [...ids.slice(0, limit - tail), ...ids.slice(ids.length - tail)], truncated: true };
  }
}

function padIdOf(json: Record<string, unknown>, tokenizer: Tokenizer): number {
  const padding = json.padding;
  if (isObject(padding) && typeof padding.pad_id === 'number') return padding.pad_id;
  for (const token of ['[PAD]', '<pad>', '<|padding|>']) {
    const id = tokenizer.token_to_id(token);
    if (id !== undefined) return id;
  }
  return 0;
}

/**
 * How many special tokens the post-processor appends: encode a sample with and without special
 * tokens and find where the bare tokens sit. Done once, so a literal "[SEP]" typed in a text is
 * not mistaken for the template's.
 */
function trailingSpecialCount(tokenizer: Tokenizer): number {
  const sample = 'a b c';
  const full: number[] = tokenizer.encode(sample).ids;
  const bare: number[] = tokenizer.encode(sample, { add_special_tokens: false }).ids;
  for (let lead = 0; lead + bare.length <= full.length; lead++) {
    if (bare.every((id, i) => full[lead + i] === id)) return full.length - lead - bare.length;
  }
  return 0;
}
