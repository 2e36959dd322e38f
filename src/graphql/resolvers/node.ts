import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import { badUserInput } from '../../errors';
import type { Context } from '../context';
import { parseGlobalId, type NodeType } from '../ids';
import { Document } from '../types/document';
import { Node } from '../types/node';
import { Passage } from '../types/passage';
import { Section } from '../types/section';

/**
 * The node's row as an instance of its class: type-graphql resolves an interface's concrete type
 * by instanceof. A copy, so the loaders' cached rows stay plain.
 */
async function loadNode(ctx: Context, type: NodeType, id: number): Promise<Node | null> {
  switch (type) {
    case 'Document': {
      const row = await ctx.loaders.document.load(id);
      return row && (Object.assign(new Document(), row) as unknown as Node);
    }
    case 'Section': {
      const row = await ctx.loaders.section.load(id);
      return row && (Object.assign(new Section(), row) as unknown as Node);
    }
    case 'Passage': {
      const row = await ctx.loaders.passage.load(id);
      return row && (Object.assign(new Passage(), row) as unknown as Node);
    }
  }
}

@Resolver()
export class NodeResolver {
  @Query(() => Node, { nullable: true, description: 'Any Node by its global id; null when none has it (deleted, or never was).' })
  node(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<Node | null> {
    const { type, id: databaseId } = parseGlobalId(id, 'id');
    return loadNode(ctx, type, databaseId);
  }

  @Query(() => [Node], {
    nullable: 'items',
    description: 'Nodes by global id, in the order asked, null for an unknown one; batched (one statement per type). At most MAX_PAGE_SIZE ids.',
  })
  nodes(@Ctx() ctx: Context, @Arg('ids', () => [ID]) ids: string[]): Promise<(Node | null)[]> {
    if (ids.length > ctx.config.maxPageSize) {
      throw badUserInput(`ids holds ${ids.length} ids; at most ${ctx.config.maxPageSize} (MAX_PAGE_SIZE) a call`, 'ids');
    }
    // Every id is checked before any is read: one bad id fails the call.
    const parsed = ids.map((id) => parseGlobalId(id, 'ids'));
    return Promise.all(parsed.map(({ type, id }) => loadNode(ctx, type, id)));
  }
}
