import type { Database, Queryable } from './db';

/**
 * A set-based rebuild of every BM25 posting and statistic (migration 0007's tables) from the
 * stored rows, for large loads and repairs. The triggers keep the tables right row batch by row
 * batch, which costs ≈ 2 ms a passage and slows as the postings B-trees grow (bench:bm25: a 1M
 * passage load did not finish in 30 minutes). Here the postings are written once, into tables
 * without indexes, and the indexes are then built by sorting: the same rows and statistics as the
 * triggers would leave (test/bm25-rebuild.test.ts compares them), in one transaction.
 *
 * Differences from the trigger path, both by design: `impact` (only an ordering hint for bounded
 * candidate generation) is computed with the final average lengths, not those at write time; and
 * terms whose document frequency fell to 0 are not kept.
 *
 * Writers wait while it runs (the tables are locked); lexical queries wait too, from the moment
 * the postings are emptied. Not on Citus, whose shards keep their own statistics (store/citus.ts).
 */
export interface Bm25RebuildResult {
  /** Passages given their full-text vector here (they had none). */
  indexed: number;
  passages: number;
  documents: number;
  passagePostings: number;
  documentPostings: number;
  terms: number;
}

const POSTINGS_TABLES = ['passage_postings', 'document_postings'];
/** The English analysis and literature k1 / b of migration 0007's impact formula. */
const IMPACT_K1 = 1.2;
const IMPACT_B = 0.75;

export async function rebuildBm25(db: Database, options: { workMem?: string } = {}): Promise<Bm25RebuildResult> {
  if (db.distributed === 'citus') {
    throw new Error('the BM25 rebuild is not on Citus: each shard group keeps its own BM25 statistics through its triggers');
  }
  const result = await db.transaction(async (tx) => {
    // Writers queue behind this (ingest, delete); readers of the title tree go on.
    await tx.exec('LOCK TABLE documents, passages IN SHARE ROW EXCLUSIVE MODE');
    const workMem = options.workMem ?? '256MB';
    await tx.query(`SELECT set_config('work_mem', $1, true), set_config('maintenance_work_mem', $1, true)`, [workMem]);

    // The full-text step without the update trigger: its postings are about to be rebuilt anyway.
    await tx.exec('ALTER TABLE passages DISABLE TRIGGER passages_bm25_update');
    const [{ indexed }] = await tx.query<{ indexed: number }>(
      `WITH indexed AS (
         UPDATE passages SET search = to_tsvector('english'::regconfig, passage_search_text(title_path, text))
         WHERE search IS NULL RETURNING 1)
       SELECT count(*)::int AS indexed FROM indexed`,
    );
    await tx.exec('ALTER TABLE passages ENABLE TRIGGER passages_bm25_update');

    await tx.exec('TRUNCATE passage_postings, document_postings, document_lengths, bm25_terms');
    const rebuildIndexes = await dropIndexes(tx);

    // Passages: lengths and statistics first, then every posting with its impact at the final avgdl.
    // Sums in float8: real sums over a whole corpus round (a per-batch sum in the triggers does not).
    await tx.exec(`
      CREATE TEMP TABLE bm25_rebuild_passages ON COMMIT DROP AS
        SELECT p.id, p.document_id, sum(coalesce(array_length(t.positions, 1), 1))::real AS length
        FROM passages p, unnest(p.search) t WHERE p.search IS NOT NULL GROUP BY p.id, p.document_id`);
    await tx.exec(`
      UPDATE bm25_stats s SET items = a.n, total_length = a.total, total_summary = 0
      FROM (SELECT count(*) AS n, coalesce(sum(length::float8), 0) AS total FROM bm25_rebuild_passages) a
      WHERE s.level = 'p'`);
    await tx.exec(`
      INSERT INTO passage_postings (lexeme, document_id, passage_id, tf, length, impact)
        SELECT t.lexeme, r.document_id, r.id, t.tf, r.length,
               t.tf / (t.tf + ${IMPACT_K1} * (${1 - IMPACT_B} + ${IMPACT_B} * r.length / greatest(s.total_length / greatest(s.items, 1), 1)))
        FROM bm25_rebuild_passages r JOIN passages p ON p.id = r.id
        CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::real AS tf FROM unnest(p.search) u) t
        CROSS JOIN bm25_stats s WHERE s.level = 'p'`);
    await tx.exec(`INSERT INTO bm25_terms (level, lexeme, df) SELECT 'p', lexeme, count(*) FROM passage_postings GROUP BY lexeme`);

    // Documents (BM25F): the full text is the sum of their passages' postings, the summary its own analysis.
    await tx.exec(`
      CREATE TEMP TABLE bm25_rebuild_documents ON COMMIT DROP AS
        SELECT document_id, lexeme, sum(tf_body)::real AS tf_body, sum(tf_summary)::real AS tf_summary FROM (
          SELECT document_id, lexeme, tf AS tf_body, 0::real AS tf_summary FROM passage_postings
          UNION ALL
          SELECT d.id, t.lexeme, 0::real, coalesce(array_length(t.positions, 1), 1)::real
            FROM documents d, unnest(to_tsvector('english'::regconfig, d.summary)) t
        ) x GROUP BY document_id, lexeme`);
    await tx.exec(`
      INSERT INTO document_lengths (document_id, length_body, length_summary)
        SELECT document_id, sum(tf_body::float8), sum(tf_summary::float8) FROM bm25_rebuild_documents GROUP BY document_id`);
    await tx.exec(`
      UPDATE bm25_stats s SET items = a.n, total_length = a.body, total_summary = a.summary
      FROM (SELECT count(*) AS n, coalesce(sum(length_body::float8), 0) AS body, coalesce(sum(length_summary::float8), 0) AS summary
            FROM document_lengths) a
      WHERE s.level = 'd'`);
    await tx.exec(`INSERT INTO bm25_terms (level, lexeme, df) SELECT 'd', lexeme, count(*) FROM bm25_rebuild_documents GROUP BY lexeme`);
    await tx.exec(`
      INSERT INTO document_postings (lexeme, document_id, tf_body, tf_summary, length_body, length_summary, impact)
        SELECT b.lexeme, b.document_id, b.tf_body, b.tf_summary, l.length_body, l.length_summary,
               (b.tf_body + b.tf_summary) / (b.tf_body + b.tf_summary
                 + ${IMPACT_K1} * (${1 - IMPACT_B} + ${IMPACT_B} * (l.length_body + l.length_summary)
                   / greatest((s.total_length + s.total_summary) / greatest(s.items, 1), 1)))
        FROM bm25_rebuild_documents b JOIN document_lengths l USING (document_id) CROSS JOIN bm25_stats s WHERE s.level = 'd'`);

    for (const statement of rebuildIndexes) await tx.exec(statement);
    const [counts] = await tx.query<Omit<Bm25RebuildResult, 'indexed'>>(
      `SELECT (SELECT items::int FROM bm25_stats WHERE level = 'p') AS passages,
              (SELECT items::int FROM bm25_stats WHERE level = 'd') AS documents,
              (SELECT count(*)::int FROM passage_postings) AS "passagePostings",
              (SELECT count(*)::int FROM document_postings) AS "documentPostings",
              (SELECT count(*)::int FROM bm25_terms) AS terms`,
    );
    return { indexed, ...counts };
  });
  // Outside the transaction: planner statistics, and the visibility map index-only scans need.
  await db.exec(`VACUUM ANALYZE ${POSTINGS_TABLES.join(', ')}, document_lengths, bm25_terms`);
  return result;
}

/**
 * Drops the postings tables' indexes and key constraints, returning the statements that make them
 * again, as the catalog defines them (so the migration stays their one definition).
 */
async function dropIndexes(tx: Queryable): Promise<string[]> {
  const rows = await tx.query<{ table_name: string; index_name: string; constraint_name: string | null; definition: string }>(
    `SELECT t.relname AS table_name, i.relname AS index_name, c.conname AS constraint_name,
            CASE WHEN c.oid IS NULL THEN pg_get_indexdef(i.oid) ELSE pg_get_constraintdef(c.oid) END AS definition
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     LEFT JOIN pg_constraint c ON c.conindid = i.oid AND c.conrelid = t.oid
     WHERE t.oid = ANY($1::regclass[])
     ORDER BY t.relname, c.oid IS NULL, i.relname`,
    [POSTINGS_TABLES],
  );
  const remake: string[] = [];
  for (const r of rows) {
    if (r.constraint_name) {
      await tx.exec(`ALTER TABLE ${quote(r.table_name)} DROP CONSTRAINT ${quote(r.constraint_name)}`);
      remake.push(`ALTER TABLE ${quote(r.table_name)} ADD CONSTRAINT ${quote(r.constraint_name)} ${r.definition}`);
    } else {
      await tx.exec(`DROP INDEX ${quote(r.index_name)}`);
      remake.push(r.definition);
    }
  }
  return remake;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
