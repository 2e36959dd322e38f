/** dhr-model.json: how to run a custom sentence-transformers style model. */
import { DEFAULT_MAX_TOKENS, EncoderError, type MaxTokens } from '../types';

export type Pooling = 'mean' | 'cls';

export interface TextPrefixes {
  question: string;
  document: string;
  passage: string;
}

export interface TransformerModelConfig {
  name: string;
  pooling: Pooling;
  normalize: boolean;
  maxTokens: MaxTokens;
  prefixes: TextPrefixes;
}

const KINDS = ['question', 'document', 'passage'] as const;
const TOP_FIELDS = ['name', 'pooling', 'normalize', 'maxTokens', 'prefixes'];
/** Far above any encoder's context; catches a typo such as 5120000 rather than limiting real models. */
const MAX_TOKENS_CEILING = 1_000_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses and validates dhr-model.json. `fallbackName` (the folder name) names the model in errors
 * until a valid "name" is known. Unknown fields are errors: a misspelt "pooling" must not silently
 * fall back to the default.
 */
export function parseModelConfig(text: string, file: string, fallbackName: string): TransformerModelConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text: never echo a file's content.
    throw new EncoderError(fallbackName, `${file} is not valid JSON`);
  }
  if (!isObject(json)) throw new EncoderError(fallbackName, `${file} must hold a JSON object`);
  const rawName = json.name;
  if (typeof rawName !== 'string' || rawName.trim() === '') {
    throw new EncoderError(fallbackName, `${file}: field "name" must be a non-empty string`);
  }
  const name = rawName;
  const fail = (field: string, problem: string): never => {
    throw new EncoderError(name, `${file}: field "${field}" ${problem}`);
  };
  for (const key of Object.keys(json)) {
    if (!TOP_FIELDS.includes(key)) fail(key, `is not known (expected ${TOP_FIELDS.join(', ')})`);
  }

  const pooling = json.pooling ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls') fail('pooling', `must be "mean" or "cls", got ${JSON.stringify(pooling)}`);

  const normalize = json.normalize ?? true;
  if (typeof normalize !== 'boolean') fail('normalize', `must be true or false, got ${JSON.stringify(normalize)}`);

  const maxTokens: MaxTokens = { ...DEFAULT_MAX_TOKENS };
  if (json.maxTokens !== undefined) {
    const m = json.maxTokens;
    if (!isObject(m)) return fail('maxTokens', 'must be an object like {"question": 80, "document": 512, "passage": 280}');
    for (const [key, value] of Object.entries(m)) {
      const kind = KINDS.find((k) => k === key);
      if (!kind) fail(`maxTokens.${key}`, `is not known (expected ${KINDS.join(', ')})`);
      else if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TOKENS_CEILING) {
        fail(`maxTokens.${key}`, `must be an integer from 1 to ${MAX_TOKENS_CEILING}, got ${JSON.stringify(value)}`);
      } else maxTokens[kind] = value;
    }
  }

  const prefixes: TextPrefixes = { question: '', document: '', passage: '' };
  if (json.prefixes !== undefined) {
    const p = json.prefixes;
    if (!isObject(p)) return fail('prefixes', 'must be an object like {"question": "query: ", "passage": "passage: "}');
    for (const [key, value] of Object.entries(p)) {
      const kind = KINDS.find((k) => k === key);
      if (!kind) fail(`prefixes.${key}`, `is not known (expected ${KINDS.join(', ')})`);
      else if (typeof value !== 'string') fail(`prefixes.${key}`, `must be a string, got ${JSON.stringify(value)}`);
      else prefixes[kind] = value;
    }
  }

  return { name, pooling: pooling as Pooling, normalize: normalize as boolean, maxTokens, prefixes };
}
