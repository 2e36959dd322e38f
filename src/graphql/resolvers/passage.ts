import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../context';
import { loadReferenced, preloadedDocument } from '../loaders';
import { parseNodeId, toGlobalId } from '../ids';
import { Document } from '../types/document';
import { Passage } from '../types/passage';
import { Section } from '../types/section';

@Resolver(() => Passage)
export class PassageResolver {
  @Query(() => Passage, { nullable: true })
  passage(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<Passage | null> {
    return ctx.loaders.passage.load(parseNodeId(id, 'Passage', 'id'));
  }

  @FieldResolver(() => ID, { description: 'Global id (Node).' })
  id(@Root() passage: Passage): string {
    return toGlobalId('Passage', passage.id);
  }

  @FieldResolver(() => Int, { description: 'The integer id in the database (what id was before global ids).' })
  databaseId(@Root() passage: Passage): number {
    return passage.id;
  }

  @FieldResolver(() => Document)
  async document(@Root() passage: Passage, @Ctx() ctx: Context): Promise<Document> {
    return (preloadedDocument(passage) as Document | undefined) ?? loadReferenced(ctx.loaders.document, passage.documentId, 'document');
  }

  @FieldResolver(() => Section, { nullable: true, description: 'Null for passages of the abstract.' })
  section(@Root() passage: Passage, @Ctx() ctx: Context): Promise<Section | null> | null {
    return passage.sectionId === null ? null : ctx.loaders.section.load(passage.sectionId);
  }

  @FieldResolver(() => Passage, { nullable: true, description: 'The passage before this one in the document.' })
  previous(@Root() passage: Passage, @Ctx() ctx: Context): Promise<Passage | null> | null {
    if (passage.ordinal === 0) return null;
    return ctx.loaders.passageAt.load({ documentId: passage.documentId, ordinal: passage.ordinal - 1 });
  }

  @FieldResolver(() => Passage, { nullable: true, description: 'The passage after this one in the document.' })
  next(@Root() passage: Passage, @Ctx() ctx: Context): Promise<Passage | null> {
    return ctx.loaders.passageAt.load({ documentId: passage.documentId, ordinal: passage.ordinal + 1 });
  }
}
