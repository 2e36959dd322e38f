import { DEFAULT_BM25, type Bm25Settings, type SearchInput } from '../types';
import type { Params } from './params';
import { filterJoin, filterSql } from './parts';

/**
 * Okapi BM25 over the postings that migration 0007 keeps (same English analysis as the GIN
 * tsvector), Lucene's non-negative idf: ln(1 + (N − df + 0.5) / (df + 0.5)).
 * Documents are scored with BM25F over two fields sharing k1 and b: tf = tf_full_text +
 * w·tf_summary, length likewise, w = summaryWeight.
 */
export const bm25Of = (s: SearchInput): Bm25Settings => ({ ...DEFAULT_BM25, ...s.bm25 });

/**
 * The question's lexemes with their idf and the level's average length: `pterms` (passages) and
 * `dterms` (documents). Terms no item holds drop out; a question without indexable words
 * (only stop words) gives empty sets, so every lexical score is 0 rather than an SQL error.
 */
export function termCtes(s: SearchInput, p: Params, levels: { passages?: boolean; documents?: boolean }): string {
  const b = bm25Of(s);
  const q = p.add(s.questionText ?? '');
  const ctes = [`qterms AS MATERIALIZED (SELECT DISTINCT t.lexeme FROM unnest(to_tsvector('english'::regconfig, ${q}::text)) t)`];
  if (levels.passages) {
    ctes.push(`pterms AS MATERIALIZED (
      SELECT bt.lexeme, ln(1 + (st.items - bt.df + 0.5) / (bt.df + 0.5)) AS idf, st.total_length / greatest(st.items, 1) AS avgdl
      FROM ${summedTerms('p', q)} bt CROSS JOIN ${summedStats('p')} st WHERE bt.df > 0)`);
  }
  if (levels.documents) {
    const w = p.add(b.summaryWeight);
    ctes.push(`dterms AS MATERIALIZED (
      SELECT bt.lexeme, ln(1 + (st.items - bt.df + 0.5) / (bt.df + 0.5)) AS idf,
             greatest((st.total_length + ${w}::float8 * st.total_summary) / greatest(st.items, 1), 1e-9) AS avgdl,
             ${w}::float8 AS w
      FROM ${summedTerms('d', q)} bt CROSS JOIN ${summedStats('d')} st WHERE bt.df > 0)`);
  }
  return ctes.join(',\n');
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
 * The top `limit` passages by BM25 (columns passage_id, document_id, lexical). Candidates come
 * from each term's best postings by impact, at most termCap per term (all of them with `exact`),
 * so a word in most passages costs at most termCap rows; the best candidates are then scored
 * exactly over every question term.
 */
export function passageTop(s: SearchInput, p: Params, limit: number, exact: boolean): string {
  if (s.distributed) return passageTopDistributed(s, p, limit);
  // Exact reads whole posting lists: no order needed. Bounded reads each list best impact first.
  const cap = exact ? '' : ` ORDER BY pp.impact DESC LIMIT ${p.add(bm25Of(s).termCap)}`;
  const score = passageTerm(s, p);
  const rescore = exact ? limit : Math.max(2 * limit, 100);
  const candidates = `SELECT pp.passage_id, pp.document_id, sum(${score}) AS lexical
      FROM pterms t CROSS JOIN LATERAL (
        SELECT pp.document_id, pp.passage_id, pp.tf, pp.length FROM passage_postings pp${filterJoin(s, 'pp.document_id')}
        WHERE pp.lexeme = t.lexeme${filterSql(p, s.filter)}${cap}) pp
      GROUP BY pp.passage_id, pp.document_id
      ORDER BY lexical DESC, pp.passage_id LIMIT ${p.add(rescore)}`;
  if (exact) return candidates;
  // One key lookup per (candidate, term); LIMIT 1 keeps the planner from turning the probes into
  // a join over whole posting lists (bench:bm25 at 100k: slowest question 92 → 54 ms).
  return `SELECT c.passage_id, c.document_id, sum(${score}) AS lexical
    FROM (${candidates}) c CROSS JOIN pterms t
    CROSS JOIN LATERAL (SELECT pp.tf, pp.length FROM passage_postings pp
      WHERE pp.lexeme = t.lexeme AND pp.document_id = c.document_id AND pp.passage_id = c.passage_id LIMIT 1) pp
    GROUP BY c.passage_id, c.document_id
    ORDER BY lexical DESC, c.passage_id LIMIT ${p.add(limit)}`;
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
  const cap = exact ? '' : ` ORDER BY dp.impact DESC LIMIT ${p.add(bm25Of(s).termCap)}`;
  const score = documentTerm(s, p);
  const rescore = exact ? limit : Math.max(2 * limit, 100);
  const candidates = `SELECT dp.document_id, sum(${score}) AS lexical
      FROM dterms t CROSS JOIN LATERAL (
        SELECT dp.document_id, dp.tf_body, dp.tf_summary, dp.length_body, dp.length_summary
        FROM document_postings dp${filterJoin(s, 'dp.document_id')}
        WHERE dp.lexeme = t.lexeme${filterSql(p, s.filter)}${cap}) dp
      GROUP BY dp.document_id
      ORDER BY lexical DESC, dp.document_id LIMIT ${p.add(rescore)}`;
  if (exact) return candidates;
  return `SELECT c.document_id, sum(${score}) AS lexical
    FROM (${candidates}) c CROSS JOIN dterms t
    JOIN document_postings dp ON dp.lexeme = t.lexeme AND dp.document_id = c.document_id
    GROUP BY c.document_id
    ORDER BY lexical DESC, c.document_id LIMIT ${p.add(limit)}`;
}

/** Exact BM25 of the passages of the documents in CTE `docs` (columns passage_id, lexical). */
export function passagesOfDocuments(s: SearchInput, p: Params, docs: string): string {
  return `SELECT pp.passage_id, sum(${passageTerm(s, p)}) AS lexical
    FROM ${docs} x CROSS JOIN pterms t
    JOIN passage_postings pp ON pp.lexeme = t.lexeme AND pp.document_id = x.document_id
    GROUP BY pp.passage_id`;
}

/** Exact BM25 of given passages, CTE `rows` with passage_id and document_id (columns passage_id, lexical). */
export function passagesExact(s: SearchInput, p: Params, rows: string): string {
  return `SELECT x.passage_id, sum(${passageTerm(s, p)}) AS lexical
    FROM ${rows} x CROSS JOIN pterms t
    JOIN passage_postings pp ON pp.lexeme = t.lexeme AND pp.document_id = x.document_id AND pp.passage_id = x.passage_id
    GROUP BY x.passage_id`;
}

/** Exact BM25F of the documents in CTE `docs` (columns document_id, lexical). */
export function documentsExact(s: SearchInput, p: Params, docs: string): string {
  return `SELECT x.document_id, sum(${documentTerm(s, p)}) AS lexical
    FROM ${docs} x CROSS JOIN dterms t
    JOIN document_postings dp ON dp.lexeme = t.lexeme AND dp.document_id = x.document_id
    GROUP BY x.document_id`;
}
