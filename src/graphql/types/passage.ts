import { Field, Int, ObjectType } from 'type-graphql';
import type { PassageRow } from '../../store/rows';
import { Node } from './node';

/**
 * The object is the passage row (store/rows.ts, merged in here): the class declares the columns
 * exposed as they are, and the compiler holds their types to the row's. The id is exposed as
 * databaseId and inside the global id (the Node's id field); the resolvers read the others.
 */
export interface Passage extends PassageRow {}

@ObjectType({ description: 'A block of at most maxWords words inside one section (or the abstract).', implements: Node })
export class Passage {
  @Field(() => String)
  text!: string;

  @Field(() => [String], { description: 'Document title, then section titles down to this passage.' })
  titlePath!: string[];

  @Field(() => Int)
  wordCount!: number;

  @Field(() => Int, { description: 'Reading order within the document, from 0.' })
  ordinal!: number;
}
