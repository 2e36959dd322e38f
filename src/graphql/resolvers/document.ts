import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pendingWork } from '../../store/pending';
import { countDocuments, listDocuments, storeStats } from '../../store/reads';
import { deleteDocument } from '../../store/write';
import { badUserInput, notFound } from '../../errors';
import type { Role } from '../auth';
import type { Context } from '../context';
import { checkPageSize, decodeCursor, encodeCursor, parseId } from '../ids';
import { DocumentConnection, PassageConnection } from '../types/connections';
import { Document, StoreStats } from '../types/document';
import { Link } from '../types/link';
import { Section } from '../types/section';

const DEFAULT_PAGE = 20;

@Resolver(() => Document)
export class DocumentResolver {
  @Query(() => Document, { nullable: true, description: 'A document by id or by key (give exactly one).' })
  async document(
    @Ctx() ctx: Context,
    @Arg('id', () => ID, { nullable: true }) id?: string | null,
    @Arg('key', () => String, { nullable: true }) key?: string | null,
  ): Promise<Document | null> {
    if ((id == null) === (key == null)) throw badUserInput('give exactly one of id or key', id == null ? 'id' : 'key');
    if (id != null) return ctx.loaders.document.load(parseId(id, 'id'));
    return ctx.loaders.documentByKey.load(key as string);
  }

  @Query(() => DocumentConnection, { description: 'Documents in ingest order, filtered, as a Relay connection.' })
  async documents(
    @Ctx() ctx: Context,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
    @Arg('titleContains', () => String, { nullable: true }) titleContains?: string | null,
    @Arg('source', () => String, { nullable: true }) source?: string | null,
  ): Promise<DocumentConnection> {
    const size = checkPageSize(first ?? DEFAULT_PAGE, ctx.config.maxPageSize);
    const afterId = decodeCursor(after, 'document') ?? 0;
    const filter = { titleContains: titleContains ?? undefined, source: source ?? undefined };
    const { rows, hasNextPage } = await listDocuments(ctx.db, filter, size, afterId);
    for (const row of rows) ctx.loaders.document.prime(row.id, row);
    const edges = rows.map((node) => ({ cursor: encodeCursor('document', node.id), node }));
    return {
      edges,
      pageInfo: {
        hasNextPage,
        hasPreviousPage: afterId > 0,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges[edges.length - 1]?.cursor ?? null,
      },
      filter,
    };
  }

  @Query(() => StoreStats, { description: 'How much is stored.' })
  async stats(@Ctx() ctx: Context): Promise<StoreStats> {
    const [counts, pending] = await Promise.all([storeStats(ctx.db), pendingWork(ctx.db)]);
    return { ...counts, pending };
  }

  @Authorized<Role>('admin')
  @Mutation(() => Boolean, { description: 'Deletes a document with its sections, passages and links.' })
  async deleteDocument(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<boolean> {
    const documentId = parseId(id, 'id');
    if (!(await deleteDocument(ctx.db, documentId))) throw notFound(`document ${documentId} does not exist`);
    return true;
  }

  @FieldResolver(() => [Section], { description: 'Top-level sections, in order.' })
  async sections(@Root() doc: Document, @Ctx() ctx: Context): Promise<Section[]> {
    return (await ctx.loaders.tocByDocument.load(doc.id)).filter((s) => s.parentId === null);
  }

  @FieldResolver(() => [Section], { description: 'All sections in pre-order: the table of contents.' })
  toc(@Root() doc: Document, @Ctx() ctx: Context): Promise<Section[]> {
    return ctx.loaders.tocByDocument.load(doc.id);
  }

  @FieldResolver(() => Int)
  passageCount(@Root() doc: Document, @Ctx() ctx: Context): Promise<number> {
    return ctx.loaders.passageCount.load(doc.id);
  }

  @FieldResolver(() => PassageConnection, { description: 'Passages in reading order.' })
  async passages(
    @Root() doc: Document,
    @Ctx() ctx: Context,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
  ): Promise<PassageConnection> {
    const size = checkPageSize(first ?? DEFAULT_PAGE, ctx.config.maxPageSize);
    const afterOrdinal = decodeCursor(after, 'passage') ?? -1;
    const [rows, totalCount] = await Promise.all([
      ctx.loaders.passagePage.load({ documentId: doc.id, afterOrdinal, first: size }),
      ctx.loaders.passageCount.load(doc.id),
    ]);
    const page = rows.slice(0, size);
    for (const row of page) ctx.loaders.passage.prime(row.id, row);
    const edges = page.map((node) => ({ cursor: encodeCursor('passage', node.ordinal), node }));
    return {
      edges,
      pageInfo: {
        hasNextPage: rows.length > size,
        hasPreviousPage: afterOrdinal >= 0,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges[edges.length - 1]?.cursor ?? null,
      },
      totalCount,
    };
  }

  @FieldResolver(() => [Link], { description: "Links written in this document's passages." })
  outgoingLinks(@Root() doc: Document, @Ctx() ctx: Context): Promise<Link[]> {
    return ctx.loaders.outgoingLinks.load(doc.id);
  }

  @FieldResolver(() => [Link], { description: 'Links from other passages that resolve to this document.' })
  incomingLinks(@Root() doc: Document, @Ctx() ctx: Context): Promise<Link[]> {
    return ctx.loaders.incomingLinks.load(doc.id);
  }
}

@Resolver(() => DocumentConnection)
export class DocumentConnectionResolver {
  @FieldResolver(() => Int, { description: 'Documents matching the filter (all pages).' })
  totalCount(@Root() connection: DocumentConnection, @Ctx() ctx: Context): Promise<number> {
    return countDocuments(ctx.db, connection.filter);
  }
}
