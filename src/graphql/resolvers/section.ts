import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import type { Context } from '../context';
import { loadReferenced } from '../loaders';
import { parseNodeId, toGlobalId } from '../ids';
import { Document } from '../types/document';
import { Passage } from '../types/passage';
import { Section } from '../types/section';

@Resolver(() => Section)
export class SectionResolver {
  @Query(() => Section, { nullable: true })
  section(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<Section | null> {
    return ctx.loaders.section.load(parseNodeId(id, 'Section', 'id'));
  }

  @FieldResolver(() => ID, { description: 'Global id (Node).' })
  id(@Root() section: Section): string {
    return toGlobalId('Section', section.id);
  }

  @FieldResolver(() => Int, { description: 'The integer id in the database (what id was before global ids).' })
  databaseId(@Root() section: Section): number {
    return section.id;
  }

  @FieldResolver(() => Document)
  async document(@Root() section: Section, @Ctx() ctx: Context): Promise<Document> {
    return loadReferenced(ctx.loaders.document, section.documentId, 'document');
  }

  @FieldResolver(() => Section, { nullable: true, description: 'Null for top-level sections.' })
  parent(@Root() section: Section, @Ctx() ctx: Context): Promise<Section | null> | null {
    return section.parentId === null ? null : ctx.loaders.section.load(section.parentId);
  }

  @FieldResolver(() => [Section])
  children(@Root() section: Section, @Ctx() ctx: Context): Promise<Section[]> {
    return ctx.loaders.childrenBySection.load(section.id);
  }

  @FieldResolver(() => [Passage], { description: "This section's own passages (not its subsections')." })
  passages(@Root() section: Section, @Ctx() ctx: Context): Promise<Passage[]> {
    return ctx.loaders.passagesBySection.load(section.id);
  }
}
