import { Arg, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { pendingWork, queuedIngest } from '../../store/pending';
import { documentPage } from '../../store/pages';
import { countDocuments, storeStats } from '../../store/reads';
import { deleteDocument } from '../../store/write';
import { badUserInput, notFound } from '../../errors';
import type { Role } from '../auth';
import type { Context } from '../context';
import { parseNodeId, toGlobalId } from '../ids';
import { connectionOf, planPage } from '../paging';
import { DocumentConnection, PassageConnection } from '../types/connections';
import { Document, StoreStats } from '../types/document';
import { bm25Candidates } from '../../store/bm25-index';
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
    if (id != null) return ctx.loaders.document.load(parseNodeId(id, 'Document', 'id'));
    return ctx.loaders.documentByKey.load(key as string);
  }

  @Query(() => DocumentConnection, { description: 'Documents in ingest order, filtered, as a Relay connection (first/after forward, last/before backward).' })
  async documents(
    @Ctx() ctx: Context,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
    @Arg('titleContains', () => String, { nullable: true }) titleContains?: string | null,
    @Arg('source', () => String, { nullable: true }) source?: string | null,
    @Arg('last', () => Int, { nullable: true }) last?: number | null,
    @Arg('before', () => String, { nullable: true }) before?: string | null,
  ): Promise<DocumentConnection> {
    const plan = planPage({ first, after, last, before }, 'document', ctx.config.maxPageSize, DEFAULT_PAGE);
    const filter = { titleContains: titleContains ?? undefined, source: source ?? undefined };
    const read = await documentPage(ctx.db, filter, plan);
    for (const row of read.rows) ctx.loaders.document.prime(row.id, row);
    return { ...connectionOf(plan, read, 'document', (row) => row.id), filter };
  }

  @Query(() => StoreStats, { description: 'How much is stored.' })
  async stats(@Ctx() ctx: Context): Promise<StoreStats> {
    const [counts, pending, queued, bm25] = await Promise.all([storeStats(ctx.db), pendingWork(ctx.db), queuedIngest(ctx.db), bm25Candidates(ctx.db)]);
    return { ...counts, pending: { ...pending, queued }, bm25Candidates: bm25 };
  }

  @Authorized<Role>('admin')
  @Mutation(() => Boolean, { description: 'Deletes a document with its sections, passages and links.' })
  async deleteDocument(@Ctx() ctx: Context, @Arg('id', () => ID) id: string): Promise<boolean> {
    const documentId = parseNodeId(id, 'Document', 'id');
    if (!(await deleteDocument(ctx.db, documentId))) throw notFound(`document ${documentId} does not exist`);
    return true;
  }

  @FieldResolver(() => ID, { description: 'Global id (Node).' })
  id(@Root() doc: Document): string {
    return toGlobalId('Document', doc.id);
  }

  @FieldResolver(() => Int, { description: 'The integer id in the database (what id was before global ids).' })
  databaseId(@Root() doc: Document): number {
    return doc.id;
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

  @FieldResolver(() => PassageConnection, { description: 'Passages in reading order (first/after forward, last/before backward).' })
  async passages(
    @Root() doc: Document,
    @Ctx() ctx: Context,
    @Arg('first', () => Int, { nullable: true }) first?: number | null,
    @Arg('after', () => String, { nullable: true }) after?: string | null,
    @Arg('last', () => Int, { nullable: true }) last?: number | null,
    @Arg('before', () => String, { nullable: true }) before?: string | null,
  ): Promise<PassageConnection> {
    const plan = planPage({ first, after, last, before }, 'passage', ctx.config.maxPageSize, DEFAULT_PAGE);
    const [read, totalCount] = await Promise.all([ctx.loaders.passagePage.load({ documentId: doc.id, ...plan }), ctx.loaders.passageCount.load(doc.id)]);
    const connection = connectionOf(plan, read, 'passage', (row) => row.ordinal);
    for (const { node } of connection.edges) ctx.loaders.passage.prime(node.id, node);
    return { ...connection, totalCount };
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
