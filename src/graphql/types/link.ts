import { Field, ID, ObjectType } from 'type-graphql';
import type { LinkRow } from '../../store/rows';

/** The object is the link row, as Passage is the passage row (types/passage.ts). */
export interface Link extends LinkRow {}

@ObjectType({ description: 'A hyperlink from a passage to a document key or title (or a URL).' })
export class Link {
  @Field(() => ID)
  id!: number;

  @Field(() => String, { description: 'The target as written.' })
  target!: string;

  @Field(() => String)
  anchorText!: string;
}
