import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A hyperlink from a passage to a document key or title (or a URL).' })
export class Link {
  @Field(() => ID)
  id!: number;

  passageId!: number;
  documentId!: number;
  targetDocumentId!: number | null;

  @Field(() => String, { description: 'The target as written.' })
  target!: string;

  @Field(() => String)
  anchorText!: string;
}
