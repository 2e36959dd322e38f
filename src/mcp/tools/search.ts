import { RETRIEVE_DEFAULTS } from '../../retrieval/defaults';
import { z } from 'zod';
import { parseNodeId, toGlobalId } from '../../graphql/ids';
import { assembleContext, CONTEXT_EXPANSIONS, CONTEXT_LIMITS, contextTokenizer, validateContextOptions, type ContextOptions } from '../../pipeline/context';
import { MODES, RETRIEVAL_MODES } from '../../retrieval/modes';
import { retrieve } from '../../retrieval/retrieve';
import { RETRIEVAL_LIMITS } from '../../retrieval/validate';
import type { DocumentRow } from '../../store/rows';
import { serverRetrieveOptions } from '../../graphql/retrieve-options';
import { renamed } from '../errors';
import { documentRef } from '../shapes';
import { defineTool } from '../tool';

/** Passages an agent's search ranks: a context's worth, not the API's k2 of up to 1000. */
export const MAX_SEARCH_K = 100;
/** A context budget that holds a page of passages of any encoder's size. */
export const DEFAULT_SEARCH_TOKENS = 2000;

/** retrieve's and the context's argument names where search's differ. */
const ARGUMENTS = { k2: 'k', 'filter.documentIds': 'documentIds' };

export const search = defineTool({
  name: 'search',
  title: 'Search the corpus',
  description:
    "Answers a question with context blocks that fit a token budget: the top k passages ranked (by the server's default mode unless `mode` says), then built along each document's title tree, in rank order: adjacent hits of one section become one block, a section with at least mergeRatio of its passages hit becomes one block whole, and `expand` adds each hit's neighbours (WINDOW) or whole section (SECTION). Each block cites its passages (get_passage, get_section read around them); `truncated` counts ranked passages whose block did not fit.",
  role: 'reader',
  readOnly: true,
  input: z.strictObject({
    question: z.string().min(1).max(RETRIEVAL_LIMITS.maxQuestionChars).describe('the question, in words'),
    mode: z
      .enum(RETRIEVAL_MODES as [string, ...string[]])
      .optional()
      .describe("the retrieval mode (default: the server's, HYBRID_HIERARCHICAL with encoders)"),
    k: z.number().int().min(1).max(MAX_SEARCH_K).default(10).describe(`passages ranked before the blocks are built (1–${MAX_SEARCH_K}, default 10)`),
    tokens: z
      .number()
      .int()
      .min(1)
      .max(CONTEXT_LIMITS.maxTokens)
      .default(DEFAULT_SEARCH_TOKENS)
      .describe(`the context budget: the blocks' tokens together, counted with the passage encoder's tokenizer (default ${DEFAULT_SEARCH_TOKENS})`),
    expand: z
      .enum(CONTEXT_EXPANSIONS)
      .optional()
      .describe('NONE (default): the hits; WINDOW: each hit with `window` neighbours each side; SECTION: each hit with its whole section up to sectionTokens'),
    window: z
      .number()
      .int()
      .min(0)
      .max(CONTEXT_LIMITS.maxWindow)
      .optional()
      .describe(`WINDOW: passages each side of a hit (default ${CONTEXT_LIMITS.defaultWindow})`),
    sectionTokens: z
      .number()
      .int()
      .min(1)
      .max(CONTEXT_LIMITS.maxTokens)
      .optional()
      .describe('SECTION: the most tokens a whole section may have to be taken whole (default: tokens)'),
    mergeRatio: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe(`the share of a section's passages that, hit, make the whole section the block (default ${CONTEXT_LIMITS.defaultMergeRatio})`),
    documentIds: z
      .array(z.union([z.string().min(1).max(100), z.number().int().positive()]))
      .max(RETRIEVAL_LIMITS.maxFilterIds)
      .optional()
      .describe('search only these documents'),
  }),
  async run(ctx, args) {
    const options: ContextOptions = {
      tokens: args.tokens,
      expand: args.expand,
      window: args.window,
      sectionTokens: args.sectionTokens,
      mergeRatio: args.mergeRatio,
    };
    // Checked before anything runs, so a refusal leaves nothing half assembled.
    validateContextOptions(options);
    const documentIds = args.documentIds?.map((id) => parseNodeId(id, 'Document', 'documentIds'));
    const targets = await ctx.models?.current();
    const result = await retrieve(
      ctx.db,
      targets,
      // k1: the documents stage 1 keeps, the GraphQL API's default.
      {
        question: args.question,
        mode: args.mode as keyof typeof MODES | undefined,
        k1: RETRIEVE_DEFAULTS.k1,
        k2: args.k,
        filter: documentIds ? { documentIds } : undefined,
      },
      await serverRetrieveOptions(ctx),
    ).catch((error: unknown) => Promise.reject(renamed(error, ARGUMENTS)));
    const hits = result.passages.map((p) => ({ passageId: p.passageId, documentId: p.documentId, score: p.score }));
    const context = await assembleContext(ctx.db, hits, options, contextTokenizer(targets?.encoders.byRole.passage));
    const documents = new Map<number, DocumentRow | null>();
    const ids = [...new Set([...context.blocks.map((b) => b.documentId), ...result.documents.map((d) => d.documentId)])];
    (await ctx.loaders.document.loadMany(ids)).forEach((row, i) => documents.set(ids[i], row instanceof Error ? null : row));
    const cite = (id: number) => {
      const row = documents.get(id);
      return row ? documentRef(row) : { id: toGlobalId('Document', id) };
    };
    return {
      mode: result.args.mode,
      blocks: context.blocks.map((b) => ({
        rank: b.rank,
        score: b.score,
        titlePath: b.titlePath,
        text: b.text,
        tokens: b.tokens,
        document: cite(b.documentId),
        sectionId: b.sectionId === null ? null : toGlobalId('Section', b.sectionId),
        passageIds: b.passageIds.map((id) => toGlobalId('Passage', id)),
      })),
      tokens: context.tokens,
      budget: context.budget,
      truncated: context.truncated,
      tokenizer: context.tokenizer,
      // A documents-only mode ranks no passages: its documents are the answer.
      ...(MODES[result.args.mode].documentsOnly ? { documents: result.documents.map((d, i) => ({ rank: i + 1, score: d.score, ...cite(d.documentId) })) } : {}),
      warnings: result.warnings,
    };
  },
});
