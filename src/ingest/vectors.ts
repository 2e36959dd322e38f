/**
 * Vectors a client brings (external models, "bring your own vectors"): the checks every vector
 * argument gets — ingest's document and passage vectors here, retrieve's question vectors in
 * src/retrieval — so a bad one is refused by name (BAD_USER_INPUT with its argument path) before
 * anything is written. Pure: the models' names and dimensions come in as values.
 */
import { DomainError, echo, ErrorCode } from '../errors';
import { SOURCE_FIELDS } from './formats';

/** The largest magnitude a stored vector component can hold (float4, pgvector's element type). */
const FLOAT4_MAX = 3.4028234663852886e38;

/**
 * Why `value` is not a usable vector (of `dimension` numbers, when given), as words that follow
 * its name; undefined when it is fine. NaN, ±Infinity and numbers beyond float4 are refused:
 * pgvector refuses them too, and one would make every inner product with it meaningless.
 */
export function vectorProblem(value: unknown, dimension?: number): string | undefined {
  if (!Array.isArray(value) && !(value instanceof Float32Array)) return 'must be a list of numbers';
  if (value.length === 0) return 'is empty';
  for (let k = 0; k < value.length; k++) {
    const x: unknown = value[k];
    if (typeof x !== 'number' || !Number.isFinite(x) || Math.abs(x) > FLOAT4_MAX) {
      return `has ${echo(x)} at [${k}]: every number must be finite (no NaN or Infinity) and within float4's range`;
    }
  }
  if (dimension !== undefined && value.length !== dimension) return `has ${value.length} numbers, but the model stores ${dimension}-d vectors`;
  return undefined;
}

/** A bad vector argument (or one missing): names it, e.g. `documents[3].sections[0].passages[1].vector`. */
export class VectorInputError extends DomainError {
  /** `where`: the document as the caller knows it, when not by its index (`dhr ingest`: its file). */
  constructor(argument: string, message: string, where?: string) {
    super(ErrorCode.BAD_USER_INPUT, `${argument}${where ? ` (${where})` : ''} ${message}`, { argument });
    this.name = 'VectorInputError';
  }
}

/** An external model that takes the supplied vectors of one level. */
export interface VectorLevel {
  name: string;
  dimension: number;
}

/** Per level, the external model the supplied vectors go to; a level left out takes none. */
export interface VectorLevels {
  document?: VectorLevel;
  passage?: VectorLevel;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasText = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

/**
 * Checks the vectors of a whole ingest before anything is written: where a level has an external
 * model, every document (document level) or every passage (passage level) needs its vector, of
 * that model's dimension, and text the server would split itself (abstract, a section's text, a
 * source format) is refused, since its passages could have no vector; where a level has none, no
 * vector may be given. Shapes prepare reports per document (a section that is not an object…) are
 * passed over here. Throws VectorInputError naming the first problem.
 */
export function checkSuppliedVectors(inputs: readonly unknown[], levels: VectorLevels, labelOf?: (index: number) => string): void {
  // labelOf: the file (or file:line) a CLI caller knows each document by, named in the message.
  inputs.forEach((raw, i) => checkDocument(raw, i, levels, labelOf?.(i)));
}

function checkDocument(raw: unknown, i: number, levels: VectorLevels, where: string | undefined): void {
  // Items that already failed (a file that could not be read) are reported by the ingest.
  if (!isObject(raw) || raw instanceof Error) return;
  const at = `documents[${i}]`;
  checkOne(raw.vector, `${at}.vector`, levels.document, 'document', where);
  if (levels.passage) {
    for (const field of ['abstract', ...SOURCE_FIELDS]) {
      if (hasText(raw[field])) throw textRefused(`${at}.${field}`, levels.passage, where);
    }
  }
  // The document (its abstract's passages), then its sections in pre-order, without recursion:
  // nesting is bounded later, by prepare.
  const stack: { at: string; text?: unknown; passages: unknown; sections: unknown }[] = [{ at, passages: raw.passages, sections: raw.sections }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (levels.passage && hasText(node.text)) throw textRefused(`${node.at}.text`, levels.passage, where);
    if (Array.isArray(node.passages)) {
      node.passages.forEach((p, j) => checkOne(isObject(p) ? p.vector : undefined, `${node.at}.passages[${j}].vector`, levels.passage, 'passage', where));
    }
    if (!Array.isArray(node.sections)) continue;
    for (let s = node.sections.length - 1; s >= 0; s--) {
      const section: unknown = node.sections[s];
      if (isObject(section)) stack.push({ at: `${node.at}.sections[${s}]`, text: section.text, passages: section.passages, sections: section.sections });
    }
  }
}

function checkOne(value: unknown, argument: string, model: VectorLevel | undefined, level: 'document' | 'passage', where: string | undefined): void {
  if (value === undefined || value === null) {
    if (model) {
      throw new VectorInputError(
        argument,
        `is missing: the ${level} model "${model.name}" is external, so every ${level} needs its ${model.dimension}-d vector`,
        where,
      );
    }
    return;
  }
  if (!model) {
    throw new VectorInputError(
      argument,
      `has no model to go to: the active ${level} model computes its own vectors (name an external model with ingestDocuments' model argument to fill one that is not active)`,
      where,
    );
  }
  const problem = vectorProblem(value, model.dimension);
  if (problem) throw new VectorInputError(argument, problem.replace('the model', `the ${level} model "${model.name}"`), where);
}

function textRefused(argument: string, model: VectorLevel, where: string | undefined): VectorInputError {
  return new VectorInputError(
    argument,
    `is text the server would split into passages without vectors, but the passage model "${model.name}" is external: give it as passages with their vectors (passages: [{text, vector}])`,
    where,
  );
}
