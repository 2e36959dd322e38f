import { z } from 'zod';
import { badUserInput, notFound } from '../../errors';
import { parseNodeId, toGlobalId } from '../../graphql/ids';
import { loadReferenced } from '../../graphql/loaders';
import { connectionOf, planPage } from '../../graphql/paging';
import { documentPage } from '../../store/pages';
import { countDocuments, passagesAt } from '../../store/reads';
import { documentRef, idArgument, passageOf, sectionRef } from '../shapes';
import { defineTool } from '../tool';

/** Passages each side get_passage may return: a reading window, not a way to page a document. */
export const MAX_PASSAGE_WINDOW = 10;

export const listDocuments = defineTool({
  name: 'list_documents',
  title: 'List documents',
  description:
    'Documents in ingest order, a page at a time (first, then after = the endCursor of the page before), optionally filtered by a title substring or a source.',
  role: 'reader',
  readOnly: true,
  input: z.strictObject({
    first: z.number().int().min(0).max(1000).optional().describe("documents on the page (default 20; at most the server's MAX_PAGE_SIZE)"),
    after: z.string().max(200).optional().describe('the endCursor of the previous page'),
    titleContains: z.string().max(500).optional().describe('only documents whose title contains this (case-insensitive)'),
    source: z.string().max(500).optional().describe('only documents of this source'),
  }),
  async run(ctx, args) {
    const plan = planPage({ first: args.first, after: args.after }, 'document', ctx.config.maxPageSize, 20);
    const filter = { titleContains: args.titleContains, source: args.source };
    const [read, totalCount] = await Promise.all([documentPage(ctx.db, filter, plan), countDocuments(ctx.db, filter)]);
    const page = connectionOf(plan, read, 'document', (row) => row.id);
    return {
      documents: page.edges.map(({ node }) => ({ ...documentRef(node), source: node.source })),
      pageInfo: { hasNextPage: page.pageInfo.hasNextPage, endCursor: page.pageInfo.endCursor },
      totalCount,
    };
  },
});

export const getDocument = defineTool({
  name: 'get_document',
  title: 'Get a document',
  description:
    'A document by id or by key (exactly one): its title, abstract and table of contents (every section in reading order, with its depth and title path; get_section reads one).',
  role: 'reader',
  readOnly: true,
  input: z.strictObject({
    id: idArgument('document').optional(),
    key: z.string().min(1).max(2000).optional().describe("the document's key, as ingested"),
  }),
  async run(ctx, args) {
    if ((args.id === undefined) === (args.key === undefined)) throw badUserInput('give exactly one of id or key', args.id === undefined ? 'id' : 'key');
    const document =
      args.id !== undefined
        ? await ctx.loaders.document.load(parseNodeId(args.id, 'Document', 'id'))
        : await ctx.loaders.documentByKey.load(args.key as string);
    if (!document)
      throw notFound(args.id !== undefined ? `no document has id ${args.id}` : `no document has key "${args.key}"`, args.id !== undefined ? 'id' : 'key');
    const [toc, passageCount] = await Promise.all([ctx.loaders.tocByDocument.load(document.id), ctx.loaders.passageCount.load(document.id)]);
    return {
      ...documentRef(document),
      source: document.source,
      metadata: document.metadata,
      abstract: document.abstract,
      passageCount,
      toc: toc.map((s) => ({
        ...sectionRef(s),
        depth: s.depth,
        parentId: s.parentId === null ? null : toGlobalId('Section', s.parentId),
        titlePath: s.titlePath,
      })),
    };
  },
});

export const getSection = defineTool({
  name: 'get_section',
  title: 'Get a section',
  description:
    "A section by id: its title path, document, parent and subsections, and its own passages' text in reading order (a subsection's are read with get_section on it).",
  role: 'reader',
  readOnly: true,
  input: z.strictObject({ id: idArgument('section') }),
  async run(ctx, args) {
    const section = await ctx.loaders.section.load(parseNodeId(args.id, 'Section', 'id'));
    if (!section) throw notFound(`no section has id ${args.id}`, 'id');
    const [document, parent, children, passages] = await Promise.all([
      loadReferenced(ctx.loaders.document, section.documentId, 'document'),
      section.parentId === null ? null : ctx.loaders.section.load(section.parentId),
      ctx.loaders.childrenBySection.load(section.id),
      ctx.loaders.passagesBySection.load(section.id),
    ]);
    return {
      ...sectionRef(section),
      titlePath: section.titlePath,
      depth: section.depth,
      document: documentRef(document),
      parent: parent ? sectionRef(parent) : null,
      children: children.map(sectionRef),
      passages: passages.map(passageOf),
    };
  },
});

export const getPassage = defineTool({
  name: 'get_passage',
  title: 'Get a passage with its neighbours',
  description: `A passage by id with up to \`window\` passages before and after it in the document's reading order (fewer at the document's start or end), and its document.`,
  role: 'reader',
  readOnly: true,
  input: z.strictObject({
    id: idArgument('passage'),
    window: z.number().int().min(0).max(MAX_PASSAGE_WINDOW).default(1).describe(`passages each side (0–${MAX_PASSAGE_WINDOW}, default 1)`),
  }),
  async run(ctx, args) {
    const passage = await ctx.loaders.passage.load(parseNodeId(args.id, 'Passage', 'id'));
    if (!passage) throw notFound(`no passage has id ${args.id}`, 'id');
    const positions = [];
    for (let o = passage.ordinal - args.window; o <= passage.ordinal + args.window; o++) {
      if (o >= 0 && o !== passage.ordinal) positions.push({ documentId: passage.documentId, ordinal: o });
    }
    const [document, around] = await Promise.all([loadReferenced(ctx.loaders.document, passage.documentId, 'document'), passagesAt(ctx.db, positions)]);
    const inOrder = around.sort((a, b) => a.ordinal - b.ordinal);
    return {
      passage: passageOf(passage),
      before: inOrder.filter((p) => p.ordinal < passage.ordinal).map(passageOf),
      after: inOrder.filter((p) => p.ordinal > passage.ordinal).map(passageOf),
      document: documentRef(document),
    };
  },
});
