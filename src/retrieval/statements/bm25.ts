import { DEFAULT_BM25, type Bm25Settings, type SearchInput } from '../types';
import type { Params } from './params';
import { BM25_INDEX } from '../../store/bm25-index';
import { filterJoin, filterSql, hasFilter, probeJoin } from './parts';

/**
 * Okapi BM25 over the postings that migration 0007 keeps (same English analysis as the GIN
 * tsvector), Lucene's non-negative idf: ln(1 + (N − df + 0.5) / (df + 0.5)).
 * Documents are scored with BM25F over two fields sharing k1 and b: tf = tf_full_text +
 * w·tf_summary, length likewise, w = summaryWeight.
 */
export const bm25Of = (s: SearchInput): Bm25Settings => ({ ...DEFAULT_BM25, ...s.bm25 });

/**
 * The question's lexemes with their idf (float8 once, not per posting) and the level's average
 * length: `pterms` (passages) and `dterms` (documents), with boundedTerms' columns. Terms no
 * item holds drop out; a question without indexable words (only stop words) gives empty sets,
 * so every lexical score is 0 rather than an SQL error.
 */
export function termCtes(s: SearchInput, p: Params, levels: { passages?: boolean; documents?: boolean }): string {
  const b = bm25Of(s);
  const q = p.add(s.questionText ?? '');
  const ctes = [`qterms AS MATERIALIZED (SELECT DISTINCT t.lexeme FROM unnest(to_tsvector('english'::regconfig, ${q}::text)) t)`];
  const cap = levels.passages || levels.documents ? p.add(b.termCap) : '';
  if (levels.passages) {
    ctes.push(
      `pterms AS MATERIALIZED (${boundedTerms(
        cap,
        `
      SELECT bt.lexeme, bt.df, ln(1 + (st.items - bt.df + 0.5) / (bt.df + 0.5))::float8 AS idf, st.total_length / greatest(st.items, 1) AS avgdl
      FROM ${summedTerms('p', q)} bt CROSS JOIN ${summedStats('p')} st WHERE bt.df > 0`,
      )})`,
    );
  }
  if (levels.documents) {
    const w = p.add(b.summaryWeight);
    ctes.push(
      `dterms AS MATERIALIZED (${boundedTerms(
        cap,
        `
      SELECT bt.lexeme, bt.df, ln(1 + (st.items - bt.df + 0.5) / (bt.df + 0.5))::float8 AS idf,
             greatest((st.total_length + ${w}::float8 * st.total_summary) / greatest(st.items, 1), 1e-9) AS avgdl,
             ${w}::float8 AS w
      FROM ${summedTerms('d', q)} bt CROSS JOIN ${summedStats('d')} st WHERE bt.df > 0`,
      )})`,
    );
  }
  return ctes.join(',\n');
}

/**
 * A level's question terms with what bounded candidate generation needs. `cap`: the postings read
 * from the term's list: all of them when the question's lists hold at most termCap postings in
 * all (then the bounded search is exact and probes nothing; scaled caps cut small corpora's common
 * lists, and a probe's plan there is poor: bench:bm25 at 10k, p95 202 ms), otherwise termCap scaled
 * by the term's idf against the question's highest (a term adds at most idf·(k1+1) to a score, so
 * a common word's long list is worth fewer reads; bench:bm25 at 1M passages, docs/benchmarks.md).
 * `bit`: the term's flag in a candidate's `seen` mask (62 terms; a question's later terms get 0 and
 * are always probed).
 */
function boundedTerms(cap: string, terms: string): string {
  return `SELECT x.*, CASE WHEN sum(x.df) OVER () <= ${cap} THEN x.df ELSE ceil(${cap}::float8 * x.idf / max(x.idf) OVER ())::int END AS cap,
           CASE WHEN x.ord <= 62 THEN 1::bigint << (x.ord - 1) ELSE 0 END AS bit
    FROM (SELECT y.*, row_number() OVER (ORDER BY y.lexeme)::int AS ord FROM (${terms}) y) x`;
}

/**
 * Document frequencies of the question's lexemes, summed over the rows that hold them: one row
 * per lexeme on one server, one per shard group on Citus (statistics are kept where the documents
 * are), so idf is corpus-wide either way. Same types as one row's (bigint, numeric arithmetic).
 */
const summedTerms = (level: 'p' | 'd', q: string) => `(SELECT lexeme, sum(df)::bigint AS df FROM bm25_terms
        WHERE level = '${level}' AND lexeme = ANY(tsvector_to_array(to_tsvector('english'::regconfig, ${q}::text))) GROUP BY lexeme)`;

/** The level's item count and total lengths, summed like summedTerms. */
const summedStats = (level: 'p' | 'd') => `(SELECT sum(items)::bigint AS items, sum(total_length) AS total_length,
        sum(total_summary) AS total_summary FROM bm25_stats WHERE level = '${level}')`;

/** One term's BM25 contribution for posting `pp` of a passage (terms `t`). */
function passageTerm(s: SearchInput, p: Params): string {
  const { k1, b } = bm25Of(s);
  const K1 = p.add(k1);
  const B = p.add(b);
  return `t.idf * pp.tf * (${K1}::float8 + 1) / (pp.tf + ${K1}::float8 * (1 - ${B}::float8 + ${B}::float8 * pp.length / greatest(t.avgdl, 1e-9)))`;
}

/** One term's BM25F contribution for posting `dp` of a document (terms `t`, which carry w). */
function documentTerm(s: SearchInput, p: Params): string {
  const { k1, b } = bm25Of(s);
  const K1 = p.add(k1);
  const B = p.add(b);
  const tf = `(dp.tf_body + t.w * dp.tf_summary)`;
  const len = `(dp.length_body + t.w * dp.length_summary)`;
  return `t.idf * ${tf} * (${K1}::float8 + 1) / (${tf} + ${K1}::float8 * (1 - ${B}::float8 + ${B}::float8 * ${len} / t.avgdl))`;
}

/**
 * The top `limit` passages by BM25 (columns passage_id, document_id, lexical). Exact: every
 * posting of every question term. Bounded: candidates from each term's best postings by impact,
 * at most the term's cap (boundedTerms), ranked by their partial score; the best `rescore` of them
 * are then scored exactly (rescoreExactly).
 */
export function passageTop(s: SearchInput, p: Params, limit: number, exact: boolean): string {
  if (s.distributed) return passageTopDistributed(s, p, limit);
  const score = passageTerm(s, p);
  const postings = `passage_postings pp${filterJoin(s, 'pp.document_id')} WHERE pp.lexeme = t.lexeme${filterSql(p, s.filter)}`;
  if (exact) {
    return `SELECT pp.passage_id, pp.document_id, sum(${score}) AS lexical
      FROM pterms t CROSS JOIN LATERAL (SELECT pp.document_id, pp.passage_id, pp.tf, pp.length FROM ${postings}) pp
      GROUP BY pp.passage_id, pp.document_id
      ORDER BY lexical DESC, pp.passage_id LIMIT ${p.add(limit)}`;
  }
  const bounded = rescoreExactly(s, p, {
    terms: 'pterms',
    score,
    keys: ['passage_id', 'document_id'],
    candidates: `SELECT pp.passage_id, pp.document_id, ${score} AS s FROM ${postings} ORDER BY pp.impact DESC LIMIT t.cap`,
    probe: `SELECT pp.tf, pp.length FROM passage_postings pp
        WHERE pp.lexeme = t.lexeme AND pp.document_id = c.document_id AND pp.passage_id = c.passage_id LIMIT 1`,
    alias: 'pp',
    limit,
  });
  if (!s.bm25Index || hasFilter(s.filter)) return bounded;
  // The index where the question's posting lists are long: its cost is about its depth, the
  // postings' about their length (bench:peers; on the Python docs at depth 40, 5–6 ms against
  // 2 ms + 1.5 µs a posting), so each question takes the cheaper, decided once (one-time filters).
  const depth = Math.max(INDEX_DEPTH * limit, INDEX_MIN_CANDIDATES);
  const worth = `(SELECT coalesce(sum(df), 0) > ${p.add(bm25Of(s).indexWorth * depth)} FROM pterms)`;
  return `SELECT * FROM (${passageTopIndexed(s, p, limit, depth)}) i WHERE ${worth}
      UNION ALL SELECT * FROM (${bounded}) b WHERE NOT ${worth}`;
}

/**
 * Candidates for passage BM25 from the BM25 index, where the store has one (store/bm25-index.ts):
 * per question, its top `candidates` (INDEX_DEPTH × `limit`) by block-max WAND, 5–6 ms where the
 * postings of common words took 10–45 (bench:peers); each candidate is then scored exactly from
 * the postings, so every score is the product's BM25 and the ranking is the exact one whenever the
 * exact top `limit` is among the index's candidates (the index's own statistics drift: migration
 * 0026). Not with a metadata filter: the index's top rows are taken before it, so a filter that
 * keeps few documents would leave too few.
 */
function passageTopIndexed(s: SearchInput, p: Params, limit: number, candidates: number): string {
  const depth = p.add(candidates);
  // The index's scan drives (each candidate then scored through its terms), read once: as the
  // inner side of a join it ran once per question term; and in a FROM subquery, not a CTE, since
  // pg_textsearch reads the LIMIT above its scan (in a CTE it ranked its default 1,000 rows).
  return `SELECT x.passage_id, x.document_id, sc.lexical
      FROM (SELECT passage_id, document_id FROM ${BM25_INDEX.table}
            ORDER BY search_text <@> to_bm25query(${p.add(s.questionText ?? '')}::text, '${BM25_INDEX.index}') LIMIT ${depth}) x
      CROSS JOIN LATERAL (SELECT sum(${passageTerm(s, p)}) AS lexical FROM pterms t
        ${probeJoin(s, 'passage_postings', 'pp', 'pp.tf, pp.length', 'pp.lexeme = t.lexeme AND pp.document_id = x.document_id AND pp.passage_id = x.passage_id')}) sc
      WHERE sc.lexical IS NOT NULL
      ORDER BY lexical DESC, x.passage_id LIMIT ${p.add(limit)}`;
}

/** The index's candidates per passage asked for, and at least this many (recall against exact: bench:peers). */
const INDEX_DEPTH = 2;
const INDEX_MIN_CANDIDATES = 40;

/**
 * Bounded candidates, then the best `rescore` of them by partial score scored exactly. A
 * candidate's partial score is already exact for the terms it was read under (its bit in `seen`)
 * and for the terms whose whole list was read (df ≤ cap: not read means absent), so only the
 * truncated lists it was not read under are probed, one key lookup each (LIMIT 1 keeps the planner
 * from joining whole posting lists); a question whose lists were all read whole probes nothing,
 * and the uncorrelated test skips the per-candidate scan of the terms (bench:hybrid at 10k: 1,000
 * candidates × terms). At 1M passages the misses of the earlier bound (only 100
 * candidates rescored, every term probed) were all candidates cut before rescoring, hence a deeper
 * and cheaper rescoring (docs/benchmarks.md).
 */
function rescoreExactly(
  s: SearchInput,
  p: Params,
  q: { terms: string; score: string; keys: string[]; candidates: string; probe: string; alias: string; limit: number },
): string {
  const rescore = Math.max(2 * q.limit, bm25Of(s).rescore);
  const keys = q.keys.map((k) => `${q.alias}.${k}`).join(', ');
  const id = q.keys[0];
  return `SELECT ${q.keys.map((k) => `c.${k}`).join(', ')}, c.known + coalesce(x.missing, 0) AS lexical
    FROM (SELECT ${keys}, sum(${q.alias}.s) AS partial,
                 coalesce(sum(${q.alias}.s) FILTER (WHERE t.bit <> 0), 0) AS known, bit_or(t.bit) AS seen
          FROM ${q.terms} t CROSS JOIN LATERAL (${q.candidates}) ${q.alias}
          GROUP BY ${keys}
          ORDER BY partial DESC, ${q.alias}.${id} LIMIT ${p.add(rescore)}) c
    CROSS JOIN LATERAL (
      SELECT sum(${q.score}) AS missing FROM ${q.terms} t CROSS JOIN LATERAL (${q.probe}) ${q.alias}
      WHERE (SELECT bool_or(u.bit = 0 OR u.df > u.cap) FROM ${q.terms} u)
        AND (t.bit = 0 OR (t.df > t.cap AND c.seen & t.bit = 0))) x
    ORDER BY lexical DESC, c.${id} LIMIT ${p.add(q.limit)}`;
}

/**
 * Citus: every shard scores its whole posting lists of the question's terms (a join Citus pushes
 * down, grouped by a key that holds the distribution column) and returns its best `limit`; the
 * coordinator merges them. Exact on every shard, so the capped candidate scan (a LATERAL ... LIMIT
 * per term, which Citus cannot push down) is not needed: results equal exact on one server.
 */
function passageTopDistributed(s: SearchInput, p: Params, limit: number): string {
  return `SELECT pp.passage_id, pp.document_id, sum(${passageTerm(s, p)}) AS lexical
      FROM pterms t JOIN passage_postings pp ON pp.lexeme = t.lexeme${filterJoin(s, 'pp.document_id')}
      WHERE true${filterSql(p, s.filter)}
      GROUP BY pp.passage_id, pp.document_id
      ORDER BY lexical DESC, pp.passage_id LIMIT ${p.add(limit)}`;
}

function documentTopDistributed(s: SearchInput, p: Params, limit: number): string {
  return `SELECT dp.document_id, sum(${documentTerm(s, p)}) AS lexical
      FROM dterms t JOIN document_postings dp ON dp.lexeme = t.lexeme${filterJoin(s, 'dp.document_id')}
      WHERE true${filterSql(p, s.filter)}
      GROUP BY dp.document_id
      ORDER BY lexical DESC, dp.document_id LIMIT ${p.add(limit)}`;
}

/** The top `limit` documents by BM25F (columns document_id, lexical), bounded like passageTop. */
export function documentTop(s: SearchInput, p: Params, limit: number, exact: boolean): string {
  if (s.distributed) return documentTopDistributed(s, p, limit);
  const score = documentTerm(s, p);
  const postings = `document_postings dp${filterJoin(s, 'dp.document_id')} WHERE dp.lexeme = t.lexeme${filterSql(p, s.filter)}`;
  if (exact) {
    return `SELECT dp.document_id, sum(${score}) AS lexical
      FROM dterms t CROSS JOIN LATERAL (
        SELECT dp.document_id, dp.tf_body, dp.tf_summary, dp.length_body, dp.length_summary FROM ${postings}) dp
      GROUP BY dp.document_id
      ORDER BY lexical DESC, dp.document_id LIMIT ${p.add(limit)}`;
  }
  return rescoreExactly(s, p, {
    terms: 'dterms',
    score,
    keys: ['document_id'],
    candidates: `SELECT dp.document_id, ${score} AS s FROM ${postings} ORDER BY dp.impact DESC LIMIT t.cap`,
    probe: `SELECT dp.tf_body, dp.tf_summary, dp.length_body, dp.length_summary FROM document_postings dp
        WHERE dp.lexeme = t.lexeme AND dp.document_id = c.document_id LIMIT 1`,
    alias: 'dp',
    limit,
  });
}

/** Exact BM25 of the passages of the documents in CTE `docs` (columns passage_id, document_id, lexical), for the question's terms in CTE `terms` (pterms' columns). */
export function passagesOfDocuments(s: SearchInput, p: Params, docs: string, terms = 'pterms'): string {
  return `SELECT pp.passage_id, x.document_id, sum(${passageTerm(s, p)}) AS lexical
    FROM ${docs} x CROSS JOIN ${terms} t
    ${probeJoin(s, 'passage_postings', 'pp', 'pp.passage_id, pp.tf, pp.length', 'pp.lexeme = t.lexeme AND pp.document_id = x.document_id')}
    GROUP BY pp.passage_id, x.document_id`;
}

/** Exact BM25 of given passages, CTE `rows` with passage_id and document_id (columns passage_id, lexical). */
export function passagesExact(s: SearchInput, p: Params, rows: string): string {
  return `SELECT x.passage_id, sum(${passageTerm(s, p)}) AS lexical
    FROM ${rows} x CROSS JOIN pterms t
    ${probeJoin(s, 'passage_postings', 'pp', 'pp.tf, pp.length', 'pp.lexeme = t.lexeme AND pp.document_id = x.document_id AND pp.passage_id = x.passage_id')}
    GROUP BY x.passage_id`;
}

/** Exact BM25F of the documents in CTE `docs` (columns document_id, lexical). */
export function documentsExact(s: SearchInput, p: Params, docs: string): string {
  return `SELECT x.document_id, sum(${documentTerm(s, p)}) AS lexical
    FROM ${docs} x CROSS JOIN dterms t
    ${probeJoin(s, 'document_postings', 'dp', 'dp.tf_body, dp.tf_summary, dp.length_body, dp.length_summary', 'dp.lexeme = t.lexeme AND dp.document_id = x.document_id')}
    GROUP BY x.document_id`;
}
