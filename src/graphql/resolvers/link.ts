import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../context';
import { loadReferenced } from '../loaders';
import { Document } from '../types/document';
import { Link } from '../types/link';
import { Passage } from '../types/passage';

@Resolver(() => Link)
export class LinkResolver {
  @FieldResolver(() => Passage, { description: 'The passage the link is written in.' })
  async passage(@Root() link: Link, @Ctx() ctx: Context): Promise<Passage> {
    return loadReferenced(ctx.loaders.passage, link.passageId, 'passage');
  }

  @FieldResolver(() => Document)
  async sourceDocument(@Root() link: Link, @Ctx() ctx: Context): Promise<Document> {
    return loadReferenced(ctx.loaders.document, link.documentId, 'document');
  }

  @FieldResolver(() => Document, { nullable: true, description: 'Null until a document with that key or title exists.' })
  targetDocument(@Root() link: Link, @Ctx() ctx: Context): Promise<Document | null> | null {
    return link.targetDocumentId === null ? null : ctx.loaders.document.load(link.targetDocumentId);
  }
}
