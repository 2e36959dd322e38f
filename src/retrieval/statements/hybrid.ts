import { DEFAULT_STAGE2, type SearchInput } from '../types';
import { RANKING } from '../parameters';
import { bm25Of, documentsExact, documentTop, passagesExact, passagesOfDocuments, passageTop, termCtes } from './bm25';
import { documentStage, passageStage } from './dense';
import { budgetedDocuments } from './passage-budget';
import { stage2TermCtes, titleLinkCtes } from './title-links';
import type { Params } from './params';
import { distance, DOCUMENTS_JSON, innerProduct, minMax, minMaxWithin, NO_DOCUMENTS, PASSAGES_JSON, probeJoin, type ModeStatement } from './parts';

/**
 * Weighted fusion, per stage: alpha·dense + (1 − alpha)·lexical, each min-max normalized over the
 * stage's candidates. Scores, not ranks: with a weak encoder, rank fusion gives the dense list
 * as much say as BM25's (docs/eval: equal-weight RRF dropped Factbook Top-1 from 72.6 to 9.5).
 */
const fuse = (p: Params, alpha: number, dense: string, lexical: string) => {
  const a = p.add(alpha);
  return `${a}::float8 * ${minMax(dense)} + (1 - ${a}::float8) * ${minMax(lexical)}`;
};

/**
 * BM25 in HYBRID_HIERARCHICAL's document stage only proposes candidates: their union with the
 * dense ones is scored exactly afterwards, and the stage keeps k1 of them, so it reads candidateCap
 * postings for its rarest term and rescores only 2 × k1 (bench:hybrid: docs/benchmarks.md). Not
 * in flat HYBRID, whose lexical candidates compete as passages directly: there the same bound
 * lost recall (100k: recall@20 0.970 against its exact form).
 */
const proposing = (s: SearchInput): SearchInput => ({ ...s, bm25: { ...s.bm25, termCap: bm25Of(s).candidateCap, rescore: 0 } });

/**
 * The exact BM25 of every candidate in `candidates` (key column `key`): bounded, the lexical
 * stage's own rows are already exact (rescored) and only the others are probed; exact, every
 * candidate is probed, as the exact form always was.
 */
function candidateLexical(exact: boolean, lexicalRows: string, candidates: string, key: string, probe: (rows: string) => string): string {
  if (exact) return probe(candidates);
  return `SELECT ${key}, lexical FROM ${lexicalRows}
      UNION ALL ${probe(`(SELECT c.* FROM ${candidates} c WHERE NOT EXISTS (SELECT 1 FROM ${lexicalRows} l WHERE l.${key} = c.${key}))`)}`;
}

/**
 * `name`: one row per passage (passage_id, document_id, dense_score, lexical_score) from `parts`,
 * each a SELECT of (passage_id, document_id, dense_score, lexical) that fills what it knows and
 * leaves the rest NULL (no vector: dense NULL; no posting of a question term: lexical 0). Merged by
 * one grouping rather than joins: the planner cannot estimate an aggregate's rows and planned such
 * a join as a nested loop over the lexical CTE per row (bench:hybrid at 10k: 1,000 × 544 rows,
 * 270 ms). Each dense score is computed once, in this materialized CTE.
 */
function mergeScores(name: string, parts: string[]): string {
  return `${name} AS MATERIALIZED (
      SELECT passage_id, max(document_id) AS document_id, max(dense_score) AS dense_score, coalesce(sum(lexical), 0) AS lexical_score
      FROM (${parts.join('\n        UNION ALL ')}) u
      GROUP BY passage_id)`;
}

/**
 * Hybrid DHR, with a weight per level (documentAlpha for documents, alpha for passages: the
 * two levels have their own encoders and BM25s, and their best weights differ). Stage 1: candidates are the union of the top k1 documents by summary vector, by
 * document BM25F, and by their best passage among the top max(k1, k2) passages by vector (DHR's
 * summary says little when headings say little; a document's best passage still does). Each
 * candidate's dense score is summaryShare·summary + (1 − summaryShare)·its passages' score (the
 * summary's: its one vector, or with summaryPieces the best of it and its pieces' vectors, scored
 * over the candidates only: pieces are not indexed, so they rerank and never add a candidate)
 * (documentPassages: best hit, mean of its top 3, or cosine with its centroid; each min-max
 * normalized; a document with no such score gets the minimum), fused with its
 * BM25F, and the best k1 kept. Stage 2: every passage of those documents (embedded or not: a
 * passage without a vector still ranks by BM25), or of those a passageBudget reaches, fused the
 * same way; final score = passage + λ·document, as in DHR.
 */
export function hybridHierarchical(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  // retrieve() resolves every parameter (resolveRanking); a direct search() caller may leave some out.
  const alpha = s.alpha ?? RANKING.alpha.builtIn;
  const documentAlpha = s.documentAlpha ?? alpha;
  const share = s.summaryShare ?? RANKING.summaryShare.builtIn;
  const pool = s.documentPassages ?? RANKING.documentPassages.builtIn;
  const ddim = s.documentModel.dimension;
  const pdim = s.passageModel.dimension;
  const qd = p.addVector(s.questionForDocuments);
  const qp = p.addVector(s.questionForPassages);
  const hits = Math.max(s.k1, s.k2);
  const bestPassages =
    share < 1
      ? `passage_hits AS MATERIALIZED (${passageStage(s, p, hits, exact)}),
    best_hit AS (SELECT document_id, max(passage_score) AS best FROM passage_hits GROUP BY document_id),
    best_docs AS (SELECT document_id FROM best_hit ORDER BY best DESC, document_id LIMIT ${p.add(s.k1)}),`
      : '';
  const passagePart = share < 1 ? (pool === 'best' ? 'best_hit' : 'passage_part') : '';
  const passagePartSql = share < 1 && pool !== 'best' ? `passage_part AS (${documentsFromPassages(s, p, pool, qp)}),` : '';
  const S = p.add(share);
  // Several summary vectors: max-sim over the summary and its pieces (NULL pieces: the summary alone).
  const summaryScore = s.summaryPieces
    ? `greatest(${innerProduct('de.embedding', ddim, qd)}, (SELECT max(${innerProduct('x', ddim, qd)}) FROM unnest(de.summary_pieces) AS x))`
    : innerProduct('de.embedding', ddim, qd);
  const lexical = proposing(s);
  // Stage 2's documents: every one of the k1, or those its passage budget reaches.
  const budget = s.passageBudget ?? RANKING.passageBudget.builtIn;
  const stage2 = budget === null ? 'docs' : 'stage2_docs';
  // Documents the question names: promoted in stage 1, their names' words left out of stage 2.
  const link = s.titleLink ?? RANKING.titleLink.builtIn;
  const linkRank = s.titleLinkRank ?? RANKING.titleLinkRank.builtIn;
  // With a confirmed link, stage 2's dense side reads the question without its names (titleLinkDense).
  const qa = link > 0 && s.questionForAttribute ? p.addVector(s.questionForAttribute) : undefined;
  const passageDense = qa
    ? `CASE WHEN EXISTS (SELECT 1 FROM confirmed) THEN ${innerProduct('pe.embedding', pdim, qa)} ELSE ${innerProduct('pe.embedding', pdim, qp)} END`
    : innerProduct('pe.embedding', pdim, qp);
  const sql = `WITH ${termCtes(lexical, p, { passages: true, documents: true })},
    ${link > 0 ? `${titleLinkCtes(s, p)},` : ''}
    dense_docs AS MATERIALIZED (${documentStage(s, p, exact)}),
    lexical_docs AS MATERIALIZED (${documentTop(lexical, p, s.k1, exact)}),
    ${bestPassages}
    doc_candidates AS MATERIALIZED (
      SELECT document_id FROM dense_docs UNION SELECT document_id FROM lexical_docs${share < 1 ? ' UNION SELECT document_id FROM best_docs' : ''}${link > 0 ? ' UNION SELECT document_id FROM linked' : ''}),
    ${passagePartSql}
    doc_scored AS MATERIALIZED (
      SELECT c.document_id, ${summaryScore} AS document_dense, coalesce(l.lexical, 0) AS document_lexical,
             ${share < 1 ? 'bp.best' : 'NULL::float8'} AS best_passage
      FROM doc_candidates c
      LEFT JOIN document_embeddings de ON de.model_id = ${p.add(s.documentModel.id)} AND de.document_id = c.document_id
      LEFT JOIN (${candidateLexical(exact, 'lexical_docs', 'doc_candidates', 'document_id', (rows) => documentsExact(s, p, rows))}) l ON l.document_id = c.document_id
      ${share < 1 ? `LEFT JOIN ${passagePart} bp ON bp.document_id = c.document_id` : ''}
    ),
    doc_dense AS (
      SELECT *, ${S}::float8 * ${minMax('document_dense')} + (1 - ${S}::float8) * ${minMax('best_passage')} AS dense_part FROM doc_scored
    ),
    ${
      link > 0
        ? linkedDocs(p, fuse(p, documentAlpha, 'dense_part', 'document_lexical'), link, s.k1, linkRank)
        : `docs AS MATERIALIZED (
      SELECT document_id, document_dense, document_lexical, document_score FROM (
        SELECT *, ${fuse(p, documentAlpha, 'dense_part', 'document_lexical')} AS document_score FROM doc_dense) f
      ORDER BY document_score DESC, document_id LIMIT ${p.add(s.k1)}
    ),`
    }
    ${budget === null ? '' : `stage2_docs AS MATERIALIZED (${budgetedDocuments(s, p, 'docs', budget)}),`}
    passage_lexical AS MATERIALIZED (${passagesOfDocuments(s, p, stage2, link > 0 ? 'stage2_terms' : 'pterms')}),
    ${stage2Scored(s, p, exact, { stage2, passageDense, qp, qa })},
    passage_fused AS (
      SELECT x.*, docs.document_score, docs.document_dense, docs.document_lexical,
             ${fuseWithin(p, alpha, 'x.dense_score', 'x.lexical_score', 'b')} AS passage_score
      FROM passage_scored x JOIN docs ON docs.document_id = x.document_id CROSS JOIN stage2_bounds b),
    fused AS (SELECT *, passage_score + ${p.add(s.lambda)}::float8 * document_score AS score FROM passage_fused)
    SELECT ${PASSAGES_JSON('fused', s, p)} AS passages, ${DOCUMENTS_JSON('docs')} AS documents, (SELECT count(*) FROM qterms)::int AS question_terms`;
  return { sql, annRows: share < 1 ? hits : s.k1 };
}

/**
 * Stage 2's scored passages (`passage_scored`) and the bounds its min-max normalization uses
 * (`stage2_bounds`: dmin, dmax, lmin, lmax), over one of two candidate sets, chosen per question
 * by the stage's size (`stage2_size`: its documents × the corpus's mean passages a document):
 * - every passage of the documents, each scored exactly (DHR's second stage as written), where
 *   they are few or a small share of the corpus (Stage2Settings), and always for the exact form and
 *   on Citus;
 * - otherwise the union of their best by vector (the passage HNSW restricted to those documents:
 *   iterative scans go on until enough of their rows are found, cheap when they are a large share
 *   of the corpus, which is when every passage is many), as many of their best by BM25, and every
 *   passage of stage 1's best documents, in order, while fewer than twice as many were taken (λ
 *   lifts a high document's every passage: without them a named document's middling passages were
 *   missed, the Factbook's attribute questions lost 7 points at Top-20). Each is scored exactly by
 *   both. The normalization keeps the whole stage's bounds, so a candidate scores as it would
 *   among every passage: BM25's exactly (its maximum among the matching passages, its minimum 0
 *   where some passage matches no term), the dense maximum among the candidates (the best by
 *   vector is one), the dense minimum from one more HNSW probe with the negated question (the
 *   passage farthest from it), approximate as HNSW is.
 * A passage of the top k2 is missed only if that many passages beat it by vector, as many by BM25,
 * and its document is not among the best (recall against the exhaustive form: bench:peers,
 * docs/benchmarks.md).
 */
function stage2Scored(s: SearchInput, p: Params, exact: boolean, o: { stage2: string; passageDense: string; qp: string; qa?: string }): string {
  const model = p.add(s.passageModel.id);
  const dim = s.passageModel.dimension;
  // Every passage of the documents in `docs`, embedded or not (a passage without a vector still
  // ranks by BM25), and their vectors by (model, document), as HIERARCHICAL reads them: one index
  // range per document.
  const passagesOf = (docs: string) => [
    `SELECT ps.id AS passage_id, ps.document_id, NULL::float8 AS dense_score, NULL::float8 AS lexical FROM ${docs} d
        ${probeJoin(s, 'passages', 'ps', 'ps.id, ps.document_id', 'ps.document_id = d.document_id')}`,
    `SELECT pe.passage_id, NULL::int, ${o.passageDense}, NULL::float8 FROM ${docs} d
        ${probeJoin(s, 'passage_embeddings', 'pe', 'pe.passage_id, pe.embedding', `pe.model_id = ${model} AND pe.document_id = d.document_id`)}`,
  ];
  const exhaustiveBounds = `SELECT min(dense_score) AS dmin, max(dense_score) AS dmax, min(lexical_score) AS lmin, max(lexical_score) AS lmax FROM passage_scored`;
  const st = { ...DEFAULT_STAGE2, ...s.stage2 };
  if (exact || s.distributed || (s.meanPassages !== undefined && s.k1 * s.meanPassages <= st.exhaustiveUpTo)) {
    return `${mergeScores('passage_scored', [...passagesOf(o.stage2), `SELECT passage_id, NULL, NULL, lexical FROM passage_lexical`])},
    stage2_bounds AS MATERIALIZED (${exhaustiveBounds})`;
  }
  const n = p.add(Math.max(st.depth * s.k2, st.candidates));
  // The vector stage 2 compares with (the question without its names where a link is confirmed),
  // and its negation, as an InitPlan value: the HNSW scan takes it as its ORDER BY operand.
  const chosen = (whole: string, attribute?: string) =>
    attribute ? `(SELECT CASE WHEN EXISTS (SELECT 1 FROM confirmed) THEN ${attribute}::vector(${dim}) ELSE ${whole}::vector(${dim}) END)` : whole;
  const q = chosen(o.qp, o.qa);
  const negated = chosen(p.addVector(negate(s.questionForPassages)), s.questionForAttribute && o.qa ? p.addVector(negate(s.questionForAttribute)) : undefined);
  // The documents' test is a filter on the rows each HNSW scan returns, a hash of the documents
  // made once (IS TRUE keeps the planner from turning it into a semi join, which read the stage's
  // documents again for every row scanned; an = ANY(ARRAY(…)) was slower still on the demo).
  const within = `pe.model_id = ${model} AND (pe.document_id IN (SELECT document_id FROM ${o.stage2})) IS TRUE`;
  const gate = (on: boolean) => `${on ? '' : 'NOT '}(SELECT by_candidates FROM stage2_size)`;
  // The stage's size as the corpus's mean passages a document make it (one row of statistics, not
  // a probe a document: a corpus of short documents pays nothing for the choice); its exact count
  // only where candidates are scored, for BM25's minimum.
  const exactSize = `(SELECT coalesce(sum(c.passages), 0) FROM ${o.stage2} d
            CROSS JOIN LATERAL (SELECT ps.ordinal + 1 AS passages FROM passages ps WHERE ps.document_id = d.document_id ORDER BY ps.ordinal DESC LIMIT 1) c)`;
  return `stage2_size AS MATERIALIZED (
      SELECT n.passages > ${p.add(st.exhaustiveUpTo)} AND n.passages >= ${p.add(st.share)}::float8 * n.corpus AS by_candidates
      FROM (SELECT (SELECT count(*) FROM ${o.stage2}) * sum(items) FILTER (WHERE level = 'p')::float8 / greatest(sum(items) FILTER (WHERE level = 'd'), 1) AS passages,
                   coalesce(sum(items) FILTER (WHERE level = 'p'), 0) AS corpus
            FROM bm25_stats) n),
    dense_candidates AS MATERIALIZED (
      SELECT pe.passage_id, pe.document_id FROM passage_embeddings pe
      WHERE ${within} AND ${gate(true)}
      ORDER BY ${distance('pe.embedding', dim, q, false)} LIMIT ${n}),
    lexical_candidates AS MATERIALIZED (
      SELECT passage_id, document_id FROM passage_lexical WHERE ${gate(true)} ORDER BY lexical DESC, passage_id LIMIT ${n}),
    whole_docs AS MATERIALIZED (
      SELECT document_id FROM (${budgetedDocuments(s, p, `(SELECT * FROM docs WHERE document_id IN (SELECT document_id FROM ${o.stage2}))`, 2 * Math.max(st.depth * s.k2, st.candidates))}) w
      WHERE ${gate(true)}),
    ${mergeScores('passage_scored', [
      ...passagesOf(o.stage2).map((part) => `SELECT * FROM (${part}) e WHERE ${gate(false)}`),
      ...passagesOf('whole_docs'),
      // the candidates' vectors, by key
      `SELECT pe.passage_id, pe.document_id, ${o.passageDense}, NULL
        FROM (SELECT passage_id FROM dense_candidates UNION SELECT passage_id FROM lexical_candidates) c
        JOIN passage_embeddings pe ON pe.model_id = ${model} AND pe.passage_id = c.passage_id`,
      // a candidate by BM25 without a vector still ranks by BM25
      `SELECT passage_id, document_id, NULL, NULL FROM lexical_candidates`,
      `SELECT l.passage_id, NULL, NULL, l.lexical FROM passage_lexical l
        WHERE ${gate(false)} OR EXISTS (SELECT 1 FROM dense_candidates c WHERE c.passage_id = l.passage_id)
           OR EXISTS (SELECT 1 FROM lexical_candidates c WHERE c.passage_id = l.passage_id)
           OR l.document_id IN (SELECT document_id FROM whole_docs)`,
    ])},
    stage2_bounds AS MATERIALIZED (
      SELECT * FROM (${exhaustiveBounds}) b WHERE ${gate(false)}
      UNION ALL
      SELECT least(min(x.dense_score), (SELECT ${o.passageDense} FROM passage_embeddings pe WHERE ${within}
                                          ORDER BY ${distance('pe.embedding', dim, negated, false)} LIMIT 1)),
             max(x.dense_score),
             CASE WHEN (SELECT count(*) FROM passage_lexical) < ${exactSize} THEN 0 ELSE (SELECT min(lexical) FROM passage_lexical) END,
             (SELECT max(lexical) FROM passage_lexical)
      FROM passage_scored x HAVING ${gate(true)})`;
}

const negate = (v: Float32Array | undefined): Float32Array | undefined => (v ? v.map((x) => -x) : undefined);

/**
 * fuse with given bounds (CTE alias `b`: dmin, dmax, lmin, lmax) instead of a window over the
 * candidates: stage 2 normalizes over the whole stage even when it scores candidates only.
 */
const fuseWithin = (p: Params, alpha: number, dense: string, lexical: string, b: string) => {
  const a = p.add(alpha);
  return `${a}::float8 * ${minMaxWithin(dense, `${b}.dmin`, `${b}.dmax`)} + (1 - ${a}::float8) * ${minMaxWithin(lexical, `${b}.lmin`, `${b}.lmax`)}`;
};

/**
 * Stage 1's documents when the question names some (titleLinkCtes' `linked`): a named document
 * that stage 1 ranks within its first `rank` on its own is confirmed, and only confirmed ones get
 * the boost and have their names' words left out of stage 2 (`stage2_terms`). A title that is a
 * common word ("string", "numbers", "Exceptions") is held by many questions that do not ask about
 * that document; stage 1's own ranking tells them apart from the ones that do.
 */
function linkedDocs(p: Params, fused: string, boost: number, k1: number, rank: number): string {
  return `doc_fused AS MATERIALIZED (SELECT *, ${fused} AS base_score FROM doc_dense),
    doc_ranked AS (SELECT *, rank() OVER (ORDER BY base_score DESC, document_id) AS base_rank FROM doc_fused),
    confirmed AS MATERIALIZED (
      SELECT l.document_id, l.lexemes FROM linked l JOIN doc_ranked r ON r.document_id = l.document_id WHERE r.base_rank <= ${p.add(rank)}),
    ${stage2TermCtes('confirmed')},
    docs AS MATERIALIZED (
      SELECT document_id, document_dense, document_lexical,
             base_score + CASE WHEN document_id IN (SELECT document_id FROM confirmed) THEN ${p.add(boost)}::float8 ELSE 0 END AS document_score
      FROM doc_ranked ORDER BY document_score DESC, document_id LIMIT ${p.add(k1)}
    ),`;
}

/**
 * Every passage of each stage-1 candidate scored exactly: the mean of a document's 3 best
 * passages, or its cosine with the centroid (mean) of its passage vectors. Scored over the
 * candidates only (at most 3·k1 documents, the size of stage 2), so no extra index is needed.
 */
function documentsFromPassages(s: SearchInput, p: Params, pool: 'top3' | 'centroid', qp: string): string {
  const dim = s.passageModel.dimension;
  const from = `doc_candidates c JOIN passage_embeddings pe ON pe.model_id = ${p.add(s.passageModel.id)} AND pe.document_id = c.document_id`;
  if (pool === 'centroid') {
    const centroid = `avg(pe.embedding::vector(${dim}))`;
    return `SELECT c.document_id, -(${centroid} <#> ${qp}::vector(${dim})) / nullif(vector_norm(${centroid}), 0) AS best
      FROM ${from} GROUP BY c.document_id`;
  }
  return `SELECT document_id, avg(passage_score) AS best FROM (
      SELECT c.document_id, ${innerProduct('pe.embedding', dim, qp)} AS passage_score,
             row_number() OVER (PARTITION BY c.document_id ORDER BY pe.embedding::vector(${dim}) <#> ${qp}::vector(${dim}), pe.passage_id) AS rank
      FROM ${from}) ranked
    WHERE rank <= 3 GROUP BY document_id`;
}

/**
 * Flat hybrid: the union of the top max(k1, k2) passages by vector and by BM25, each scored
 * exactly by both and fused; no document stage.
 */
export function hybridFlat(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const alpha = s.alpha ?? RANKING.alpha.builtIn;
  const pdim = s.passageModel.dimension;
  const candidates = Math.max(s.k1, s.k2);
  const qp = p.addVector(s.questionForPassages);
  const sql = `WITH ${termCtes(s, p, { passages: true })},
    dense_hits AS MATERIALIZED (${passageStage(s, p, candidates, exact)}),
    lexical_hits AS MATERIALIZED (${passageTop(s, p, candidates, exact)}),
    hits AS MATERIALIZED (SELECT passage_id, document_id FROM dense_hits UNION SELECT passage_id, document_id FROM lexical_hits),
    hits_lexical AS MATERIALIZED (${candidateLexical(exact, 'lexical_hits', 'hits', 'passage_id', (rows) => passagesExact(s, p, rows))}),
    ${mergeScores('scored', [
      `SELECT h.passage_id, h.document_id, ${innerProduct('pe.embedding', pdim, qp)} AS dense_score, NULL::float8 AS lexical
        FROM hits h LEFT JOIN passage_embeddings pe ON pe.model_id = ${p.add(s.passageModel.id)} AND pe.passage_id = h.passage_id`,
      `SELECT passage_id, NULL, NULL, lexical FROM hits_lexical`,
    ])},
    fused AS (
      SELECT passage_id, document_id, score AS passage_score, NULL::float8 AS document_score, score,
             dense_score, lexical_score, NULL::float8 AS document_dense, NULL::float8 AS document_lexical
      FROM (SELECT *, ${fuse(p, alpha, 'dense_score', 'lexical_score')} AS score FROM scored) f
    )
    SELECT ${PASSAGES_JSON('fused', s, p)} AS passages, ${NO_DOCUMENTS} AS documents, (SELECT count(*) FROM qterms)::int AS question_terms`;
  return { sql, annRows: candidates };
}
