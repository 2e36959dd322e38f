import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A node of the title tree below the document.' })
export class Section {
  @Field(() => ID)
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
