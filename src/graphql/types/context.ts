import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { CONTEXT_EXPANSIONS, type ContextExpand } from '../../pipeline/context/options';
import { graphqlEnum } from './enums';

export const ContextExpandEnum = graphqlEnum(CONTEXT_EXPANSIONS, {
  name: 'ContextExpand',
  description:
    'How each ranked passage grows into a block: NONE (the passage; adjacent ranked passages of one section are one block), WINDOW (with `window` neighbours each side in reading order, within its section), SECTION (its whole section when that holds at most `sectionTokens` tokens, else the passage).',
}) as Record<string, ContextExpand>;

@ObjectType({ description: 'One stretch of one section’s passages in reading order, to send a model as is; never spans sections or documents.' })
export class ContextBlock {
  @Field(() => [String], { description: 'The section’s headings from the document title down.' })
  titlePath!: string[];

  @Field(() => String, { description: 'Its passages’ text in reading order, joined by a blank line.' })
  text!: string;

  @Field(() => [ID], {
    description: 'The passages it holds (global ids), in reading order: ranked ones and the ones expand or merge added. No passage is in two blocks.',
  })
  passageIds!: string[];

  @Field(() => ID)
  documentId!: string;

  @Field(() => ID, { nullable: true, description: 'null: the document’s text before its first heading.' })
  sectionId!: string | null;

  @Field(() => Float, { description: 'Its best-ranked passage’s score.' })
  score!: number;

  @Field(() => Int, { description: 'Its best-ranked passage’s rank: blocks come in this order.' })
  rank!: number;

  @Field(() => Int, { description: 'Tokens of text, counted by RetrievalContext.tokenizer.' })
  tokens!: number;
}

@ObjectType({ description: 'Context for a model: blocks built from the ranked passages along the title tree, in rank order, within a token budget.' })
export class RetrievalContext {
  @Field(() => [ContextBlock])
  blocks!: ContextBlock[];

  @Field(() => Int, { description: 'The blocks’ tokens together (at most budget).' })
  tokens!: number;

  @Field(() => Int)
  budget!: number;

  @Field(() => Int, { description: 'Ranked passages in no block: their block did not fit what was left of the budget (a block is left out whole, never cut).' })
  truncated!: number;

  @Field(() => String, {
    description: 'Whose token count: the active passage encoder’s tokenizer, else “approximate: 1 token per 4 characters” (no encoder, or an external model).',
  })
  tokenizer!: string;
}
