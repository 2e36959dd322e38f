import { Field, Int, ObjectType } from 'type-graphql';
import { Document } from './document';
import { Passage } from './passage';

@ObjectType()
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => Boolean)
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

@ObjectType()
export class DocumentEdge {
  @Field(() => String)
  cursor!: string;

  @Field(() => Document)
  node!: Document;
}

@ObjectType()
export class DocumentConnection {
  @Field(() => [DocumentEdge])
  edges!: DocumentEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  /** Filled lazily by a field resolver: counting costs a statement only when asked. */
  filter!: { titleContains?: string; source?: string };
}

@ObjectType()
export class PassageEdge {
  @Field(() => String)
  cursor!: string;

  @Field(() => Passage)
  node!: Passage;
}

@ObjectType()
export class PassageConnection {
  @Field(() => [PassageEdge])
  edges!: PassageEdge[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;

  @Field(() => Int)
  totalCount!: number;
}
