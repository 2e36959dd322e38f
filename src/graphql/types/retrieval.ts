import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { RETRIEVAL_MODES, type RetrievalMode as Mode } from '../../retrieval/types';

export const RetrievalModeEnum = Object.fromEntries(RETRIEVAL_MODES.map((m) => [m, m])) as { [K in Mode]: K };
registerEnumType(RetrievalModeEnum, {
  name: 'RetrievalMode',
  description: 'HIERARCHICAL: DHR (top-k1 documents, then their passages, fused); PARALLEL: passage ANN fused with document scores; FLAT: passage ANN only (DPR); DOCUMENTS: documents only; LEXICAL: PostgreSQL full-text search; HYBRID: reciprocal rank fusion of LEXICAL and HIERARCHICAL.',
  valuesConfig: {
    HIERARCHICAL: { description: 'DHR serial: stage 1 documents by ANN, stage 2 exact over their passages, score = passage + λ·document.' },
    PARALLEL: { description: 'DHR para-rerank: the top max(k1, k2) passages by ANN over the corpus, fused with their documents’ scores.' },
    FLAT: { description: 'DPR baseline: passage ANN over all passages, no document score.' },
    DOCUMENTS: { description: 'DHR-D alone: the top-k1 documents; passages empty.' },
    LEXICAL: { description: 'PostgreSQL full-text search (ts_rank_cd, any question term) over passage text and title path. Not BM25.' },
    HYBRID: { description: 'Reciprocal rank fusion (k = 60) of the LEXICAL and HIERARCHICAL rankings (top max(k1, k2) of each).' },
  },
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

  @Field(() => Float, { description: 'What the ranking sorts by (HIERARCHICAL/PARALLEL: passageScore + λ·documentScore).' })
  score!: number;

  @Field(() => Float, { nullable: true, description: 'E_Q^ψ(q)·E_P^ψ(p) (LEXICAL: the text rank).' })
  passageScore!: number | null;

  @Field(() => Float, { nullable: true, description: 'E_Q^φ(q)·E_D^φ(d) of the passage’s document.' })
  documentScore!: number | null;

  passageId!: number;
}

@ObjectType()
export class ScoredDocument {
  @Field(() => Int)
  rank!: number;

  @Field(() => Float, { description: 'E_Q^φ(q)·E_D^φ(d).' })
  score!: number;

  documentId!: number;
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

  @Field(() => String, { description: 'The model whose vectors were searched.' })
  model!: string;

  @Field(() => RetrievalTimings)
  timings!: RetrievalTimings;
}
