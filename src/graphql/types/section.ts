import { Field, Int, ObjectType } from 'type-graphql';
import { Node } from './node';

@ObjectType({ description: 'A node of the title tree below the document.', implements: Node })
export class Section {
  /** The database id: exposed as databaseId, and inside the global id (the Node's id field). */
  id!: number;

  documentId!: number;
  parentId!: number | null;

  @Field(() => String)
  title!: string;

  @Field(() => Int, { description: '1 for top-level sections.' })
  depth!: number;

  @Field(() => Int, { description: 'Position among its siblings, from 0.' })
  ordinal!: number;

  @Field(() => [String], { description: 'Document title, ancestor titles, this title.' })
  titlePath!: string[];
}
