-- Two costs every ingest paid for nothing (measured in docs/benchmarks.md).
--
-- 1. passages_search_idx, 0003's GIN index on the full-text vector: LEXICAL ranked with `@@` and
--    ts_rank then; since 0007 every lexical score reads the BM25 postings, and no statement the
--    product runs filters with `@@`. Keeping it cost a bulk batch of 2,000 passages ≈ 65 ms of
--    its ≈ 240 ms row insert. A `@@` query typed by hand still works (by a scan).
--
-- 2. bm25_refresh_documents subtracted the documents' old postings before writing the new: for a
--    brand-new document (every document of a first load) that read found nothing, but it read
--    document_postings with `document_id = ANY(ids)`, which the planner, without statistics yet
--    on a store filling up, estimates at half the table and answers with a full scan, twice a
--    batch: a cost that grows with the store. A document has postings only if it has a
--    document_lengths row (both are written from the same rows below), so the subtraction now
--    runs only for the documents that have one.
--
-- Citus: a store distributed before this keeps its own functions (migrations/citus/0002); a new
-- one gets them from the Citus step after this file. The index goes on both (DDL propagates).

DROP INDEX IF EXISTS passages_search_idx;

CREATE FUNCTION bm25_refresh_documents_0022(ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
  removed_body float8;
  removed_summary float8;
  old_ids integer[];
  my_slot integer;
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN RETURN; END IF;
  my_slot := bm25_slot();
  SELECT count(*), coalesce(sum(length_body), 0), coalesce(sum(length_summary), 0), coalesce(array_agg(document_id ORDER BY document_id), '{}')
    INTO removed, removed_body, removed_summary, old_ids
    FROM document_lengths WHERE document_id = ANY(ids);
  -- Written even when nothing is removed: a slot with bm25_terms rows always has a bm25_stats row.
  INSERT INTO bm25_stats AS st (level, slot, items, total_length, total_summary)
    VALUES ('d', my_slot, -removed, -removed_body, -removed_summary)
    ON CONFLICT (level, slot) DO UPDATE SET items = st.items + excluded.items,
      total_length = st.total_length + excluded.total_length, total_summary = st.total_summary + excluded.total_summary;
  IF removed > 0 THEN
    INSERT INTO bm25_terms AS bt (level, lexeme, slot, df)
      SELECT 'd', lexeme, my_slot, -count(*)::integer FROM document_postings WHERE document_id = ANY(old_ids) GROUP BY lexeme ORDER BY lexeme
      ON CONFLICT (level, lexeme, slot) DO UPDATE SET df = bt.df + excluded.df;
    DELETE FROM document_postings WHERE document_id = ANY(old_ids);
    DELETE FROM document_lengths WHERE document_id = ANY(old_ids);
  END IF;

  CREATE TEMP TABLE IF NOT EXISTS bm25_doc_batch (document_id integer, lexeme text, tf_body real, tf_summary real) ON COMMIT DROP;
  TRUNCATE bm25_doc_batch;
  INSERT INTO bm25_doc_batch
    SELECT document_id, lexeme, sum(tf_body), sum(tf_summary) FROM (
      SELECT p.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1)::real AS tf_body, 0::real AS tf_summary
        FROM passages p, unnest(p.search) t WHERE p.document_id = ANY(ids) AND p.search IS NOT NULL
      UNION ALL
      SELECT d.id, t.lexeme, 0, coalesce(array_length(t.positions, 1), 1)::real
        FROM documents d, unnest(to_tsvector('english'::regconfig, d.summary)) t WHERE d.id = ANY(ids)
    ) x GROUP BY document_id, lexeme;
  INSERT INTO document_lengths (document_id, length_body, length_summary)
    SELECT document_id, sum(tf_body), sum(tf_summary) FROM bm25_doc_batch GROUP BY document_id;
  INSERT INTO bm25_stats AS st (level, slot, items, total_length, total_summary)
    SELECT 'd', my_slot, count(*), coalesce(sum(length_body), 0), coalesce(sum(length_summary), 0)
    FROM document_lengths WHERE document_id = ANY(ids)
    ON CONFLICT (level, slot) DO UPDATE SET items = st.items + excluded.items,
      total_length = st.total_length + excluded.total_length, total_summary = st.total_summary + excluded.total_summary;
  INSERT INTO bm25_terms AS bt (level, lexeme, slot, df)
    SELECT 'd', lexeme, my_slot, count(*) FROM bm25_doc_batch GROUP BY lexeme ORDER BY lexeme
    ON CONFLICT (level, lexeme, slot) DO UPDATE SET df = bt.df + excluded.df;
  INSERT INTO document_postings (lexeme, document_id, tf_body, tf_summary, length_body, length_summary, impact)
    SELECT b.lexeme, b.document_id, b.tf_body, b.tf_summary, l.length_body, l.length_summary,
           (b.tf_body + b.tf_summary) / (b.tf_body + b.tf_summary
             + 1.2 * (0.25 + 0.75 * (l.length_body + l.length_summary) / greatest((s.total_length + s.total_summary) / greatest(s.items, 1), 1)))
    FROM bm25_doc_batch b JOIN document_lengths l USING (document_id)
    CROSS JOIN (SELECT sum(items) AS items, sum(total_length) AS total_length, sum(total_summary) AS total_summary
                FROM bm25_stats WHERE level = 'd') s;
  -- Slot 0's writer folds the slots of writers that have finished, so rows stay few without a
  -- background step (a lone writer has nothing to fold: one read of a small table).
  IF my_slot = 0 THEN PERFORM bm25_fold_free_slots(); END IF;
END $$;

DO $$
DECLARE
  distributed boolean := false;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    EXECUTE $q$SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'bm25_stats'::regclass)$q$ INTO distributed;
  END IF;
  IF distributed THEN
    DROP FUNCTION bm25_refresh_documents_0022(integer[]);
    RETURN;
  END IF;
  -- Triggers and callers name it at run time (plpgsql), so a rename swaps it in.
  DROP FUNCTION bm25_refresh_documents(integer[]);
  ALTER FUNCTION bm25_refresh_documents_0022(integer[]) RENAME TO bm25_refresh_documents;
END $$;
