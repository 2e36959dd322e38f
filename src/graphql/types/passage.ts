import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A block of at most maxWords words inside one section (or the abstract).' })
export class Passage {
  @Field(() => ID)
  id!: number;

  documentId!: number;
  sectionId!: number | null;

  @Field(() => String)
  text!: string;

  @Field(() => [String], { description: 'Document title, then section titles down to this passage.' })
  titlePath!: string[];

  @Field(() => Int)
  wordCount!: number;

  @Field(() => Int, { description: 'Reading order within the document, from 0.' })
  ordinal!: number;
}
