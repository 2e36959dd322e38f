/**
 * The question's vectors for a dense or hybrid mode: the client's own (bring your own vectors:
 * `questionVector`, or per role `questionDocumentVector` / `questionPassageVector`), else the
 * question's text encoded by the active question encoders. A role served by an external model
 * has no encoder, so its vector must come from the client.
 */
import { isExternal } from '../encoders/external';
import type { EncoderSet } from '../encoders/set';
import type { ModeNeeds, RetrievalMode } from './modes';
import { RetrievalInputError } from './validate';

export type QuestionRole = 'questionDocument' | 'questionPassage';

/** The argument that carries one role's own vector, and the level of stored vectors it meets. */
export const ROLE_ARGUMENT = { questionDocument: 'questionDocumentVector', questionPassage: 'questionPassageVector' } as const;
const LEVEL = { questionDocument: 'document', questionPassage: 'passage' } as const;

/** The question vector arguments of retrieve, in the order errors name them. */
export const QUESTION_VECTOR_ARGUMENTS = ['questionVector', 'questionDocumentVector', 'questionPassageVector'] as const;
export type QuestionVectorArgument = (typeof QUESTION_VECTOR_ARGUMENTS)[number];

export interface QuestionInput extends Partial<Record<QuestionVectorArgument, readonly number[]>> {
  question?: string;
}

export interface QuestionVectors {
  /** E_Q^φ(q), compared with document vectors (when the mode reads them). */
  document?: Float32Array;
  /** E_Q^ψ(q), compared with passage vectors (when the mode reads them). */
  passage?: Float32Array;
}

/**
 * One vector per question role the mode reads. `questionVector` serves every such role when one
 * model serves them all; where two models do, each role needs its own argument (a vector is
 * meaningful in one model's space only). A role without a vector is encoded from the text, unless
 * its model is external. Numbers were checked by validateRetrieveArgs; dimensions are checked here.
 */
export async function questionVectors(mode: RetrievalMode, needs: ModeNeeds, encoders: EncoderSet, args: QuestionInput): Promise<QuestionVectors> {
  const roles: QuestionRole[] = [...(needs.documentVector ? ['questionDocument' as const] : []), ...(needs.passageVector ? ['questionPassage' as const] : [])];
  for (const role of ['questionDocument', 'questionPassage'] as const) {
    if (args[ROLE_ARGUMENT[role]] !== undefined && !roles.includes(role)) {
      throw new RetrievalInputError(ROLE_ARGUMENT[role], `mode ${mode} compares the question with no ${LEVEL[role]} vectors: leave ${ROLE_ARGUMENT[role]} out`);
    }
  }
  const given = args.questionVector !== undefined || roles.some((r) => args[ROLE_ARGUMENT[r]] !== undefined);
  const anyExternal = isExternal(encoders.byRole.questionDocument) || isExternal(encoders.byRole.questionPassage);
  // The usual path: the text, encoded once per distinct question model (and batched, cached).
  if (!given && !anyExternal) {
    const { document, passage } = await encoders.encodeQuestion(args.question!);
    return { document, passage };
  }
  const shared = new Set(roles.map((r) => encoders.byRole[r])).size === 1;
  const out: QuestionVectors = {};
  for (const role of roles) {
    const encoder = encoders.byRole[role];
    const own = args[ROLE_ARGUMENT[role]];
    let argument: QuestionVectorArgument;
    let vector: readonly number[];
    if (own !== undefined) {
      argument = ROLE_ARGUMENT[role];
      vector = own;
    } else if (args.questionVector !== undefined && shared) {
      argument = 'questionVector';
      vector = args.questionVector;
    } else {
      const name = shared ? 'questionVector' : ROLE_ARGUMENT[role];
      if (args.questionVector !== undefined) {
        throw new RetrievalInputError(
          name,
          `${name} is missing: the question roles are served by different models (questionDocument: "${encoders.byRole.questionDocument.name}", questionPassage: "${encoders.byRole.questionPassage.name}"), so questionVector cannot serve both; give questionDocumentVector and questionPassageVector`,
        );
      }
      if (isExternal(encoder)) {
        throw new RetrievalInputError(
          name,
          `${name} is missing: the ${role} model "${encoder.name}" is external (its vectors come from the client), so mode ${mode} needs the question's ${encoder.dimension}-d vector`,
        );
      }
      if (args.question === undefined) {
        throw new RetrievalInputError(
          name,
          `${name} is missing: mode ${mode} compares the question with ${LEVEL[role]} vectors too; give ${name}, or question to encode`,
        );
      }
      out[LEVEL[role]] = (await encoders.encodeQuestionIn(role, args.question)).vector;
      continue;
    }
    if (vector.length !== encoder.dimension) {
      throw new RetrievalInputError(argument, `${argument} has ${vector.length} numbers, but the ${role} model "${encoder.name}" is ${encoder.dimension}-d`);
    }
    out[LEVEL[role]] = Float32Array.from(vector);
  }
  return out;
}
