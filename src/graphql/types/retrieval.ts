import type { DocumentRow, PassageRow } from '../../store/rows';
import type { Encoder } from '../../encoders/types';
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DEFAULT_MODE, MODES, RETRIEVAL_MODES, type RetrievalMode as Mode } from '../../retrieval/modes';
import { RANKING_SOURCES, type RankingSource } from '../../retrieval/parameters';
import { ANSWER_TYPES, type AnswerType } from '../../retrieval/answer-types';
import { MAX_ANSWER_SENTENCES } from '../../retrieval/answer';
import { graphqlEnum } from './enums';

export const AnswerTypeEnum = graphqlEnum(ANSWER_TYPES, {
  name: 'AnswerType',
  description:
    'What a question asks for, and what a highlighted span is: DATE (when), QUANTITY (how many / how much: a number with its unit), PERSON (who: a person or an organisation), PLACE (where), DEFINITION (what is: a defining sentence), INSTRUCTION (how do I: an instruction or a code span), OTHER.',
});

export const RankingSourceEnum = Object.fromEntries(RANKING_SOURCES.map((s) => [s, s])) as { [K in RankingSource]: K };

/** The GraphQL enum, from the table of modes: one value per entry, its description the entry's. */
export const RetrievalModeEnum = Object.fromEntries(RETRIEVAL_MODES.map((m) => [m, m])) as { [K in Mode]: K };
registerEnumType(RetrievalModeEnum, {
  name: 'RetrievalMode',
  description: `How retrieve ranks. Left out: ${DEFAULT_MODE} (LEXICAL on a server without encoders).`,
  valuesConfig: Object.fromEntries(RETRIEVAL_MODES.map((m) => [m, { description: MODES[m].description }])),
});

@InputType('RetrievalFilter', { description: 'Restricts retrieval to some documents; applied inside the SQL.' })
export class RetrievalFilterInput {
  @Field(() => [ID], { nullable: true })
  documentIds?: string[] | null;

  @Field(() => [String], { nullable: true })
  sources?: string[] | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Documents whose metadata contains these keys and values.' })
  metadata?: Record<string, unknown> | null;
}

@ObjectType()
export class ScoredPassage {
  @Field(() => Int, { description: 'From 1.' })
  rank!: number;

  @Field(() => Float, {
    description:
      'What the ranking sorts by (HIERARCHICAL/PARALLEL: passageScore + λ·documentScore; less (n − 1)·perDocumentDecay for its document’s n-th passage).',
  })
  score!: number;

  @Field(() => Float, {
    nullable: true,
    description:
      'The passage’s part of score: E_Q^ψ(q)·E_P^ψ(p); LEXICAL: BM25; hybrid modes: alpha·dense + (1 − alpha)·BM25, each min-max normalized over the stage.',
  })
  passageScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'The document’s part of score (before λ): E_Q^φ(q)·E_D^φ(d), or its hybrid fusion.' })
  documentScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'E_Q^ψ(q)·E_P^ψ(p), raw (null: not embedded yet, or the mode reads no vectors).' })
  denseScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'The passage’s Okapi BM25, raw (null: the mode reads no BM25).' })
  lexicalScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'E_Q^φ(q)·E_D^φ(d) of its document, raw.' })
  documentDenseScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'Its document’s BM25F (summary and full text), raw.' })
  documentLexicalScore!: number | null;

  passageId!: number;
  /** Its document (not in the schema): the key of its stored sentence vectors. */
  documentId!: number;
  /** The passage's columns the selection reads, from the search statement (absent: read by the loader). */
  row?: PassageRow;
  /** The question, for the answer field (not in the schema). */
  question!: string;
  /** Its E_Q^ψ vector when the retrieval computed one, and the encoder that did, for the answer field (not in the schema). */
  questionVector?: Float32Array;
  questionVectorEncoder?: Encoder;
}

@ObjectType({ description: 'A piece of a passage’s text; start and end are string offsets (UTF-16 code units) into Passage.text, end exclusive.' })
export class TextSpan {
  @Field(() => String)
  text!: string;

  @Field(() => Int)
  start!: number;

  @Field(() => Int)
  end!: number;
}

@ObjectType({
  description:
    'Where in a passage the answer is: the shortest span that carries it where one stands out (a phrase of the question’s type: a date for "when", a number with its unit for "how many", a name for "who", a place for "where"; the value after a label, as in "name: Oslo"), else the whole sentence most likely to answer (sentences split with Intl.Segmenter; scored by the question–passage encoder and the lexical overlap, sentences holding a phrase of the question’s type preferred, code lines only for "how do I" questions, markup leftovers never).',
})
export class PassageAnswer extends TextSpan {
  @Field(() => Float, {
    description: 'The sentence’s score: 0.6 · encoder similarity + 0.4 · share of the question’s words it contains (overlap alone without encoders).',
  })
  score!: number;

  @Field(() => TextSpan, { description: 'The sentence the answer lies in.' })
  sentence!: TextSpan;

  @Field(() => AnswerTypeEnum, { description: 'What the question asks for, from its wording (OTHER for anything else, a single word or another language).' })
  answerType!: AnswerType;

  @Field(() => AnswerTypeEnum, {
    nullable: true,
    description:
      'What the span is: a phrase of the question’s type (DATE, QUANTITY, PERSON, PLACE), or a DEFINITION / INSTRUCTION sentence; null when the passage has none of that type and the span is its best sentence (or a label’s value).',
  })
  spanType!: AnswerType | null;

  @Field(() => Boolean, {
    description: `True when the passage has more than ${MAX_ANSWER_SENTENCES} sentences: only the first ${MAX_ANSWER_SENTENCES} were read.`,
  })
  truncated!: boolean;
}

@ObjectType()
export class ScoredDocument {
  @Field(() => Int)
  rank!: number;

  @Field(() => Float, { description: 'What stage 1 ranks by: E_Q^φ(q)·E_D^φ(d), BM25F, or their hybrid fusion.' })
  score!: number;

  @Field(() => Float, { nullable: true, description: 'E_Q^φ(q)·E_D^φ(d), raw.' })
  denseScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'BM25F over summary and full text, raw.' })
  lexicalScore!: number | null;

  documentId!: number;
  /** The document's columns the selection reads, from the search statement. */
  row?: DocumentRow;
}

@ObjectType()
export class RetrievalTimings {
  @Field(() => Float)
  encodeMs!: number;

  @Field(() => Float)
  searchMs!: number;

  @Field(() => Float)
  totalMs!: number;
}

registerEnumType(RankingSourceEnum, {
  name: 'RankingSource',
  description: 'Where a ranking parameter’s value came from, in precedence order.',
  valuesConfig: {
    request: { description: 'The question’s own argument.' },
    corpus: { description: 'The corpus’s stored retrievalSettings.' },
    environment: { description: 'The server’s environment (HYBRID_ALPHA, PER_DOCUMENT, PER_DOCUMENT_DECAY).' },
    mode: { description: 'The mode’s tuned default (or the parameter’s built-in value).' },
  },
});

@ObjectType({ description: 'One ranking parameter of a retrieval: its name (a retrieve argument or a corpus setting), the value used and its source.' })
export class RankingParameter {
  @Field(() => String)
  name!: string;

  @Field(() => GraphQLJSON, { nullable: true, description: 'A number, a boolean or a name; null: none (perDocument without a bound).' })
  value!: number | boolean | string | null;

  @Field(() => RankingSourceEnum)
  source!: RankingSource;
}

@ObjectType({ description: 'One retrieval: ranked passages and the documents stage 1 chose.' })
export class Retrieval {
  @Field(() => [ScoredPassage])
  passages!: ScoredPassage[];

  @Field(() => [ScoredDocument])
  documents!: ScoredDocument[];

  @Field(() => RetrievalModeEnum)
  mode!: Mode;

  @Field(() => Int)
  k1!: number;

  @Field(() => Int)
  k2!: number;

  @Field(() => Float)
  lambda!: number;

  @Field(() => Float, { description: 'Weight of the dense score in the hybrid modes (1: dense only, 0: BM25 only).' })
  alpha!: number;

  @Field(() => Int, { nullable: true, description: 'The bound on passages per document that applied (null: none).' })
  perDocument!: number | null;

  @Field(() => [RankingParameter], { description: 'Every ranking parameter as this retrieval applied it, and where its value came from.' })
  parameters!: RankingParameter[];

  @Field(() => [String], { description: 'What to know about this answer: fallbacks, questions BM25 cannot use, documents not yet embedded.' })
  warnings!: string[];

  @Field(() => String, { description: 'The model whose vectors were searched.' })
  model!: string;

  @Field(() => String, { nullable: true, description: 'The query-side adapter applied to the question vectors (null: none).' })
  adapter!: string | null;

  @Field(() => RetrievalTimings)
  timings!: RetrievalTimings;
}

@ObjectType({ description: 'How much of one level the retrieval could see.' })
export class LevelCoverage {
  @Field(() => Int)
  total!: number;

  @Field(() => Int, { description: 'Items with a vector of the model this retrieval read (0 for modes that read none).' })
  embedded!: number;

  @Field(() => Int, { description: 'Items in the BM25 index.' })
  indexed!: number;

  @Field(() => Int, {
    nullable: true,
    description:
      'Passages with stored sentence vectors of the active passage model: their answer highlights take inner products only; the others encode their sentences when asked (null for documents).',
  })
  sentenceVectors?: number | null;
}

@ObjectType({ description: 'Embedded and indexed items against the total, per level, when the retrieval ran.' })
export class RetrievalCoverage {
  @Field(() => LevelCoverage)
  documents!: LevelCoverage;

  @Field(() => LevelCoverage)
  passages!: LevelCoverage;
}
