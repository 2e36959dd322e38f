import type { Database } from '../../src/store/db';

/**
 * What an ingest leaves in a store, by document key and passage ordinal (ids differ between
 * stores): rows, links, pending records and every BM25 row except impacts (an impact depends on
 * the average lengths when its posting was written, so on how the writes were batched).
 * test/bulk-ingest.test.ts and test/ingest-jobs.test.ts compare stores with it.
 */
export async function storeSnapshot(db: Database): Promise<Record<string, unknown[]>> {
  return {
    stats: await db.query(
      'SELECT level, sum(items)::int AS items, sum(total_length) AS total_length, sum(total_summary) AS total_summary FROM bm25_stats GROUP BY level ORDER BY level',
    ),
    terms: await db.query('SELECT level, lexeme, sum(df)::int AS df FROM bm25_terms GROUP BY level, lexeme HAVING sum(df) > 0 ORDER BY level, lexeme'),
    passagePostings: await db.query(
      `SELECT pp.lexeme, d.key, p.ordinal, pp.tf, pp.length FROM passage_postings pp
         JOIN passages p ON p.id = pp.passage_id AND p.document_id = pp.document_id JOIN documents d ON d.id = p.document_id
       ORDER BY 1, 2, 3`,
    ),
    documentPostings: await db.query(
      `SELECT dp.lexeme, d.key, dp.tf_body, dp.tf_summary, dp.length_body, dp.length_summary FROM document_postings dp
         JOIN documents d ON d.id = dp.document_id ORDER BY 1, 2`,
    ),
    lengths: await db.query('SELECT d.key, l.length_body, l.length_summary FROM document_lengths l JOIN documents d ON d.id = l.document_id ORDER BY 1'),
    documents: await db.query('SELECT key, title, abstract, summary, source, metadata, content_hash FROM documents ORDER BY key'),
    passages: await db.query(
      `SELECT d.key, p.ordinal, p.text, p.title_path, p.word_count, p.search::text, s.position AS section, s.title_path AS section_path,
              (SELECT ps.position FROM sections ps WHERE ps.id = s.parent_id) AS parent
       FROM passages p JOIN documents d ON d.id = p.document_id LEFT JOIN sections s ON s.id = p.section_id ORDER BY 1, 2`,
    ),
    links: await db.query(
      `SELECT d.key, p.ordinal, l.target, l.anchor_text, t.key AS resolved
       FROM links l JOIN passages p ON p.id = l.passage_id JOIN documents d ON d.id = l.document_id
         LEFT JOIN documents t ON t.id = l.target_document_id ORDER BY 1, 2, 3, 4`,
    ),
    pending: await db.query('SELECT d.key FROM pending_documents q JOIN documents d ON d.id = q.document_id ORDER BY 1'),
  };
}

/**
 * BM25's bookkeeping recounted from the postings themselves (brute force): each term's document
 * frequency and each level's item count must equal what the statistics say. Returns the
 * mismatches (empty when consistent).
 */
export async function bm25Mismatches(db: Database): Promise<unknown[]> {
  return db.query(
    `WITH counted AS (
       SELECT 'p' AS level, lexeme, count(*)::int AS df FROM passage_postings GROUP BY lexeme
       UNION ALL SELECT 'd', lexeme, count(*)::int FROM document_postings GROUP BY lexeme),
     stored AS (SELECT level, lexeme, sum(df)::int AS df FROM bm25_terms GROUP BY level, lexeme HAVING sum(df) > 0)
     SELECT coalesce(c.level, s.level) AS level, coalesce(c.lexeme, s.lexeme) AS lexeme, c.df AS counted, s.df AS stored
     FROM counted c FULL JOIN stored s ON s.level = c.level AND s.lexeme = c.lexeme
     WHERE c.df IS DISTINCT FROM s.df`,
  );
}
