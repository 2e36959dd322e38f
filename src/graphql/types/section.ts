import { Field, Int, ObjectType } from 'type-graphql';
import type { SectionRow } from '../../store/rows';
import { Node } from './node';

/** The object is the section row, as Passage is the passage row (types/passage.ts). */
export interface Section extends SectionRow {}

@ObjectType({ description: 'A node of the title tree below the document.', implements: Node })
export class Section {
  @Field(() => String)
  title!: string;

  @Field(() => Int, { description: '1 for top-level sections.' })
  depth!: number;

  @Field(() => Int, { description: 'Position among its siblings, from 0.' })
  ordinal!: number;

  @Field(() => [String], { description: 'Document title, ancestor titles, this title.' })
  titlePath!: string[];
}
