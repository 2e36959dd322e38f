import type { GraphQLResolveInfo } from 'graphql';
import { Args, ArgsType, Ctx, Field, FieldResolver, Float, Info, Int, Query, Resolver, Root } from 'type-graphql';
import { isExternal } from '../../encoders/external';
import { MODES } from '../../retrieval/modes';
import { highlighterFor } from '../../retrieval/highlight';
import { RANKING, RANKING_NAMES, type Ranking, type RankingName } from '../../retrieval/parameters';
import { REQUEST_ARGUMENT_NAMES, REQUEST_ARGUMENTS, type RequestArgument, type RequestArguments } from '../../retrieval/request-parameters';
import { retrieve } from '../../retrieval/retrieve';
import { coverage } from '../../store/coverage';
import type { DocumentRow, PassageRow } from '../../store/rows';
import type { Context } from '../context';
import { notFound } from '../errors';
import { parseNodeId } from '../ids';
import { serverRetrieveOptions } from '../retrieve-options';
import { withPreloadedDocument } from '../loaders';
import { retrieveRowFetch } from '../selection';
import { Document } from '../types/document';
import { Passage } from '../types/passage';
import { Retrieval, RetrievalCoverage, RetrievalFilterInput, RetrievalModeEnum, PassageAnswer, ScoredDocument, ScoredPassage } from '../types/retrieval';

/** Whether null is one of the parameter's values (no bound), not just a way of leaving it out. */
const nullMeansNone = (name: RankingName) => RANKING[name].problem(null) === undefined;

const leftOut = (name: RankingName) =>
  `${RANKING[name].description} Left out${nullMeansNone(name) ? '' : ' or null'}: the corpus's retrievalSettings, else the server's environment, else the mode's tuned default (Retrieval.parameters says which applied).${
    nullMeansNone(name) ? ' An explicit null asks for none, whatever the corpus sets.' : ''
  }`;

/**
 * A ranking argument as the request gives it: an explicit null where null is a value (perDocument,
 * passageBudget: none, overriding a corpus setting), else null read as left out (GraphQL lets a
 * client send null for any nullable argument; for lambda it never meant anything else).
 */
function requested<K extends RankingName>(name: K, value: Ranking[K] | null | undefined): Ranking[K] | undefined {
  return value === null && !nullMeansNone(name) ? undefined : (value as Ranking[K] | undefined);
}

// The request arguments (k1, k2, mode, minScore, autocut, exact): typed from their table, their fields generated below.
export interface RetrieveArgs extends RequestArguments<null> {}

/**
 * retrieve's arguments: the question (its text or vectors) and filter here, the request arguments
 * and the ranking ones generated from their tables below. Validated in the domain
 * (validateRetrieveArgs) so the CLI and eval share the checks.
 */
@ArgsType()
export class RetrieveArgs {
  @Field(() => String, {
    nullable: true,
    description:
      'The question’s text: encoded for the dense side, read by BM25 and by answer highlights. May be left out when questionVector is given (a hybrid mode then ranks by vectors alone, with a warning).',
  })
  question?: string | null;

  @Field(() => [Float], {
    nullable: true,
    description:
      'The question’s own vector (bring your own vectors), used instead of encoding question: for every question role the mode reads when one model serves them (needed when that model is external). Dense and hybrid modes only (LEXICAL, LEXICAL_DOCUMENTS: BAD_USER_INPUT).',
  })
  questionVector?: number[] | null;

  @Field(() => [Float], {
    nullable: true,
    description:
      'E_Q^φ(q), compared with document vectors, when another model serves questionDocument than questionPassage (overrides questionVector for that role).',
  })
  questionDocumentVector?: number[] | null;

  @Field(() => [Float], {
    nullable: true,
    description:
      'E_Q^ψ(q), compared with passage vectors, when another model serves questionPassage than questionDocument (overrides questionVector for that role).',
  })
  questionPassageVector?: number[] | null;

  @Field(() => RetrievalFilterInput, { nullable: true })
  filter?: RetrievalFilterInput | null;
}

/** The ranking parameters a question may set (`request` in their table), each a GraphQL argument described by it. */
export const REQUEST_RANKING = RANKING_NAMES.filter((name) => RANKING[name].request);
export type RequestRankingArgs = { [K in RankingName]?: Ranking[K] | null };
for (const name of REQUEST_RANKING) {
  const scalar = typeof RANKING[name].builtIn === 'boolean' ? Boolean : RANKING[name].problem(0.5) === undefined ? Float : Int;
  Field(() => scalar, { nullable: true, description: leftOut(name) })(RetrieveArgs.prototype, name);
}

/** The ranking arguments the request gave, as retrieve takes them. */
const requestedRanking = (a: RequestRankingArgs) => Object.fromEntries(REQUEST_RANKING.map((name) => [name, requested(name, a[name] as never)]));

const SCALARS = { int: Int, float: Float, boolean: Boolean, mode: RetrievalModeEnum } as const;
for (const name of REQUEST_ARGUMENT_NAMES) {
  const spec: RequestArgument = REQUEST_ARGUMENTS[name];
  const options =
    spec.default === undefined ? { nullable: true, description: spec.description } : { defaultValue: spec.default, description: spec.description };
  Field(() => SCALARS[spec.type], options)(RetrieveArgs.prototype, name);
}

/** What the Retrieval type's lazy fields need (not in the schema). */
interface RetrievalRoot extends Retrieval {
  modelIds: { document?: number; passage?: number; sentences?: number };
  readsVectors: boolean;
  /** One coverage query per retrieval, shared by the coverage and warnings fields. */
  counted?: ReturnType<typeof coverage>;
}

const coverageOf = (r: RetrievalRoot, ctx: Context) => (r.counted ??= coverage(ctx.db, r.modelIds));

@Resolver(() => Retrieval)
export class RetrievalResolver {
  @Query(() => Retrieval, {
    description:
      'Retrieval over the title trees (DHR and its baselines). Limits: question 1–2000 characters; 1 ≤ k1, k2 ≤ 1000; 0 ≤ lambda ≤ 10; 0 ≤ alpha ≤ 1. Returns min(k2, candidates) passages.',
  })
  async retrieve(@Ctx() ctx: Context, @Args(() => RetrieveArgs) a: RetrieveArgs, @Info() info: GraphQLResolveInfo): Promise<RetrievalRoot> {
    const filter = a.filter
      ? {
          documentIds: a.filter.documentIds?.map((id) => parseNodeId(id, 'Document', 'filter.documentIds')),
          sources: a.filter.sources ?? undefined,
          metadata: a.filter.metadata ?? undefined,
        }
      : undefined;
    // One snapshot of the active models for the whole query, even if an activation lands meanwhile.
    const targets = await ctx.models?.current();
    const rows = retrieveRowFetch(info);
    const result = await retrieve(
      ctx.db,
      targets,
      {
        question: a.question ?? undefined,
        questionVector: a.questionVector ?? undefined,
        questionDocumentVector: a.questionDocumentVector ?? undefined,
        questionPassageVector: a.questionPassageVector ?? undefined,
        k1: a.k1,
        k2: a.k2,
        ...requestedRanking(a as RetrieveArgs & RequestRankingArgs),
        mode: a.mode ?? undefined,
        filter,
        minScore: a.minScore ?? undefined,
        autocut: a.autocut ?? undefined,
      },
      {
        ...(await serverRetrieveOptions(ctx)),
        exact: a.exact,
        // The columns the selection reads come back with the ranking: one statement, one snapshot.
        rows,
      },
    );
    ctx.metrics?.observeRetrieval(result.args.mode, result.timings);
    const needs = MODES[result.args.mode].needs;
    // The statement returned the ranked rows' columns from its own snapshot, so each ranked row has
    // its row. Should one lack it (a row read later than the ranking), it is left out with a
    // warning, ranks renumbered, rather than failing the whole answer on its fields.
    const documentRows = new Map((result.documentRows ?? []).map((d) => [d.id!, d as DocumentRow]));
    const passageRows = new Map((result.passageRows ?? []).map((p) => [p.id!, withPreloadedDocument(p as PassageRow, documentRows.get(p.documentId!))]));
    // Only items whose rows were fetched can be missing: without a field of the ranked documents
    // selected (ofDocuments false), document rows are the passages' documents only, not stage 1's.
    const passages = result.passageRows ? result.passages.filter((p) => passageRows.has(p.passageId)) : result.passages;
    const documents = result.documentRows && rows.ofDocuments !== false ? result.documents.filter((d) => documentRows.has(d.documentId)) : result.documents;
    const warnings = [...result.warnings];
    const gone = result.passages.length - passages.length + result.documents.length - documents.length;
    if (gone > 0)
      warnings.push(`${gone} ranked item(s) were removed or replaced by a concurrent ingest or delete while this question was answered, and are left out`);
    return {
      passages: passages.map((p, i) => ({
        ...p,
        rank: i + 1,
        row: passageRows.get(p.passageId),
        question: a.question ?? '',
        questionVector: result.questionForPassages,
        questionVectorEncoder: targets?.encoders.byRole.questionPassage,
      })),
      documents: documents.map((d, i) => ({ ...d, rank: i + 1, row: documentRows.get(d.documentId) })),
      mode: result.args.mode,
      k1: a.k1,
      k2: a.k2,
      lambda: result.args.lambda,
      alpha: result.args.alpha,
      perDocument: result.args.perDocument ?? null,
      parameters: result.parameters.map((p) => ({ ...p, value: p.value ?? null })),
      warnings,
      model: result.model,
      adapter: result.adapter,
      timings: result.timings,
      modelIds: {
        document: needs.documentVector ? targets?.document.id : undefined,
        passage: needs.passageVector ? targets?.passage.id : undefined,
        // Highlights use the active passage model's sentence vectors whatever the mode read.
        sentences: targets?.passage.id,
      },
      readsVectors: needs.documentVector || needs.passageVector,
    };
  }

  @FieldResolver(() => RetrievalCoverage, { description: 'Embedded and BM25-indexed items against the total, per level.' })
  async coverage(@Root() r: RetrievalRoot, @Ctx() ctx: Context): Promise<RetrievalCoverage> {
    return coverageOf(r, ctx);
  }

  @FieldResolver(() => [String], { description: 'What to know about this answer: fallbacks, questions BM25 cannot use, items not yet embedded or indexed.' })
  async warnings(@Root() r: RetrievalRoot, @Ctx() ctx: Context): Promise<string[]> {
    const warnings = [...r.warnings];
    const c = await coverageOf(r, ctx);
    for (const [level, counts] of [
      ['documents', c.documents],
      ['passages', c.passages],
    ] as const) {
      const model = level === 'documents' ? r.modelIds.document : r.modelIds.passage;
      if (r.readsVectors && model !== undefined && counts.embedded < counts.total) {
        warnings.push(
          `${counts.total - counts.embedded} of ${counts.total} ${level} have no vector yet: they are found through BM25 only, or not at all by pure vector modes`,
        );
      }
      if (counts.indexed < counts.total) warnings.push(`${counts.total - counts.indexed} of ${counts.total} ${level} are not yet in the BM25 index`);
    }
    return warnings;
  }
}

@Resolver(() => ScoredPassage)
export class ScoredPassageResolver {
  @FieldResolver(() => Passage)
  async passage(@Root() scored: ScoredPassage, @Ctx() ctx: Context): Promise<Passage> {
    const passage = scored.row ?? (await ctx.loaders.passage.load(scored.passageId));
    // Deleted between the search and this read.
    if (!passage) throw notFound(`passage ${scored.passageId} no longer exists`);
    return passage as Passage;
  }

  @FieldResolver(() => PassageAnswer, {
    nullable: true,
    description:
      'Where in the passage the answer is (null: a passage without text, or a retrieval without question text; lexical overlap alone with an external model). Computed only when asked for, from the sentence vectors stored when the passage was embedded (one read for all of a retrieval’s passages); a passage without them has its sentences encoded (cached per process).',
  })
  async answer(@Root() scored: ScoredPassage, @Ctx() ctx: Context): Promise<PassageAnswer | null> {
    const passage = scored.row?.text !== undefined ? scored.row : await ctx.loaders.passage.load(scored.passageId);
    if (!passage) throw notFound(`passage ${scored.passageId} no longer exists`);
    // Without the question's text (a retrieval by questionVector alone) there is nothing to highlight against.
    if (scored.question === '') return null;
    const targets = await ctx.models?.current();
    const question = targets?.encoders.byRole.questionPassage;
    const encoder = targets?.encoders.byRole.passage;
    // An external model encodes no sentences: lexical overlap alone.
    const encoders = question && encoder && !isExternal(question) && !isExternal(encoder) ? { question, passage: encoder } : undefined;
    // The retrieval's question vector came from this snapshot's questionPassage encoder only if the
    // snapshot is the same one; an activation between the two reads re-encodes instead.
    const sameEncoder = scored.questionVectorEncoder === encoders?.question;
    const stored = targets && { loader: ctx.loaders.sentences, modelId: targets.passage.id, passageId: scored.passageId, documentId: scored.documentId };
    return highlighterFor(encoders).highlight(scored.question, passage.text, sameEncoder ? scored.questionVector : undefined, stored);
  }
}

@Resolver(() => ScoredDocument)
export class ScoredDocumentResolver {
  @FieldResolver(() => Document)
  async document(@Root() scored: ScoredDocument, @Ctx() ctx: Context): Promise<Document> {
    const document = scored.row ?? (await ctx.loaders.document.load(scored.documentId));
    if (!document) throw notFound(`document ${scored.documentId} no longer exists`);
    return document as Document;
  }
}
