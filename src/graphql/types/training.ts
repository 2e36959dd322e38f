import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { PAIR_KINDS, pairKindName, type PairKind } from '../../training/pair';

/** The kinds as GraphQL names (DUAL_LINK) over the JSONL values (dual-link). */
export const PairKindEnum: Record<string, PairKind> = Object.fromEntries(PAIR_KINDS.map((k) => [pairKindName(k), k]));
registerEnumType(PairKindEnum, {
  name: 'TrainingPairKind',
  description:
    'DUAL_LINK and CO_MENTION: HLP hyperlink pairs; SECTION_PATH: a title path and a passage of its section; DOCUMENT_TITLE: a title and an abstract passage; FEEDBACK: judged pairs (docs/training.md).',
});

@ObjectType({ description: 'A passage as a training pair carries it.' })
export class TrainingPassage {
  @Field(() => ID)
  passageId!: number;

  @Field(() => ID)
  documentId!: number;

  @Field(() => ID, { nullable: true, description: 'Null for abstract passages.' })
  sectionId!: number | null;

  @Field(() => [String])
  titlePath!: string[];

  @Field(() => String)
  text!: string;
}

@ObjectType({ description: 'A document as a training pair carries it (for the document encoder).' })
export class TrainingDocument {
  @Field(() => ID)
  documentId!: number;

  @Field(() => String)
  title!: string;
}

@ObjectType({ description: "A pair's negatives by kind (DHR Section 3.4)." })
export class TrainingNegatives {
  @Field(() => [TrainingPassage], { description: 'The top passages by BM25 for the question that do not answer it.' })
  bm25!: TrainingPassage[];

  @Field(() => [TrainingPassage], { description: "Other passages of the positive's document, sampled." })
  inDoc!: TrainingPassage[];

  @Field(() => [TrainingPassage], { description: "Other passages of the positive's section, sampled." })
  inSec!: TrainingPassage[];

  @Field(() => [TrainingDocument], { description: "The top documents by BM25F other than the positive's." })
  documents!: TrainingDocument[];

  @Field(() => [TrainingPassage], { description: 'FEEDBACK pairs: passages judged not relevant to the question (latest judgement); empty for mined kinds.' })
  judged!: TrainingPassage[];
}

@ObjectType({ description: 'A (pseudo) question, its positive passage and document, and negatives: one line of `dhr pairs`.' })
export class TrainingPair {
  @Field(() => PairKindEnum)
  kind!: PairKind;

  @Field(() => String)
  question!: string;

  @Field(() => ID, { nullable: true, description: 'Link pairs: passage A, whose text is the question.' })
  questionPassageId!: number | null;

  @Field(() => TrainingPassage)
  positive!: TrainingPassage;

  @Field(() => TrainingDocument)
  positiveDocument!: TrainingDocument;

  @Field(() => TrainingNegatives)
  negatives!: TrainingNegatives;
}

@ObjectType({ description: 'A judgement: whether a passage answers a question.' })
export class Feedback {
  @Field(() => ID)
  id!: number;

  @Field(() => String)
  question!: string;

  @Field(() => ID)
  passageId!: number;

  @Field(() => Boolean)
  relevant!: boolean;

  @Field(() => Date)
  createdAt!: Date;
}

@InputType({ description: 'A judgement to store: whether a passage answers a question (importFeedback).' })
export class FeedbackJudgementInput {
  @Field(() => String)
  question!: string;

  @Field(() => ID, { description: "The passage's global id, or its integer databaseId." })
  passageId!: string;

  @Field(() => Boolean)
  relevant!: boolean;
}

@ObjectType({ description: 'What importFeedback stored.' })
export class FeedbackImport {
  @Field(() => Int)
  imported!: number;

  @Field(() => Int, { description: 'Of them, those judged relevant (the others are not relevant).' })
  relevant!: number;
}
