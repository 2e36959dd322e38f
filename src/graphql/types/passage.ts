import { Field, Int, ObjectType } from 'type-graphql';
import { Node } from './node';

@ObjectType({ description: 'A block of at most maxWords words inside one section (or the abstract).', implements: Node })
export class Passage {
  /** The database id: exposed as databaseId, and inside the global id (the Node's id field). */
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
