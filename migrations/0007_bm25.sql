-- Okapi BM25 at two levels (passage; document = BM25F over its summary and its full text), in
-- plain SQL so PGlite and PostgreSQL 15 rank identically (no BM25 extension exists for 15).
--
-- Postings are kept per level, with the statistics BM25 needs (document frequency per term,
-- number of items, total length), by triggers: whatever writes passages (ingest, re-ingest,
-- delete, the full-text indexing step) updates them in its own transaction, so they are never
-- rebuilt by a rescan at query time. Term frequencies come from the same English analysis as the
-- GIN-indexed tsvector (`passages.search`). Stop words have no lexeme, so they count for nothing.
--
-- Lock order, the same everywhere so concurrent writers queue instead of deadlocking:
-- bm25_stats 'p' → bm25_terms 'p' (sorted) → bm25_stats 'd' → bm25_terms 'd' (sorted).

CREATE TABLE bm25_stats (
  level          text    PRIMARY KEY CHECK (level IN ('p', 'd')),
  items          bigint  NOT NULL DEFAULT 0,
  -- passages: Σ length; documents: Σ length of the full text (the passages' lexemes)
  total_length   float8  NOT NULL DEFAULT 0,
  -- documents only: Σ length of the summary (title, abstract, table of contents)
  total_summary  float8  NOT NULL DEFAULT 0
);
INSERT INTO bm25_stats (level) VALUES ('p'), ('d');

CREATE TABLE bm25_terms (
  level   text    NOT NULL,
  lexeme  text    NOT NULL,
  df      integer NOT NULL,
  PRIMARY KEY (level, lexeme)
);

-- One row per (lexeme, passage). The key serves DHR's second stage (the passages of the top-k1
-- documents that hold a question term); the impact index serves candidate generation, best
-- postings first, so a query can bound its work on a term that occurs in most passages.
CREATE TABLE passage_postings (
  lexeme       text    NOT NULL,
  document_id  integer NOT NULL,
  passage_id   integer NOT NULL,
  tf           real    NOT NULL,
  length       real    NOT NULL,
  -- tf / (tf + 1.2·(0.25 + 0.75·length / avgdl)) when written: BM25's saturation with the
  -- literature's k1 and b, only to order candidates; scores are always computed afresh
  impact       real    NOT NULL,
  PRIMARY KEY (lexeme, document_id, passage_id)
);
-- Covering, so a capped candidate scan reads the index alone and stops at the cap (bench:bm25 at
-- 100k: a plain index was read as a bitmap over the whole posting list, 112.6 → 18.9 ms p50).
CREATE INDEX passage_postings_impact_idx ON passage_postings (lexeme, impact DESC) INCLUDE (document_id, passage_id, tf, length);

CREATE TABLE document_postings (
  lexeme       text    NOT NULL,
  document_id  integer NOT NULL,
  -- occurrences in the full text (Σ over the document's indexed passages) and in the summary
  tf_body      real    NOT NULL,
  tf_summary   real    NOT NULL,
  -- the document's lengths, repeated so scoring a posting reads one row
  length_body     real NOT NULL,
  length_summary  real NOT NULL,
  impact       real    NOT NULL,
  PRIMARY KEY (lexeme, document_id)
);
CREATE INDEX document_postings_document_idx ON document_postings (document_id);
CREATE INDEX document_postings_impact_idx ON document_postings (lexeme, impact DESC)
  INCLUDE (document_id, tf_body, tf_summary, length_body, length_summary);

-- The lengths each document was counted with, so removing it subtracts exactly that.
CREATE TABLE document_lengths (
  document_id     integer PRIMARY KEY,
  length_body     real NOT NULL,
  length_summary  real NOT NULL
);

-- Adds (sign = 1) or removes (sign = -1) passages' postings, then recounts their documents.
CREATE FUNCTION bm25_apply_passages(sign integer, ids integer[], document_ids integer[], searches tsvector[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  total float8;
  avgdl float8;
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS bm25_batch (id integer, document_id integer, lexeme text, tf real, length real) ON COMMIT DROP;
  TRUNCATE bm25_batch;
  INSERT INTO bm25_batch
    SELECT r.id, r.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1)::real,
           sum(coalesce(array_length(t.positions, 1), 1)) OVER (PARTITION BY r.id)::real
    FROM unnest(ids, document_ids, searches) AS r(id, document_id, search), unnest(r.search) AS t
    WHERE r.search IS NOT NULL;
  SELECT count(DISTINCT id), coalesce(sum(tf), 0) INTO n, total FROM bm25_batch;
  IF n > 0 THEN
    UPDATE bm25_stats SET items = items + sign * n, total_length = total_length + sign * total
      WHERE level = 'p' RETURNING total_length / greatest(items, 1) INTO avgdl;
    IF sign > 0 THEN
      INSERT INTO bm25_terms (level, lexeme, df)
        SELECT 'p', lexeme, count(*) FROM bm25_batch GROUP BY lexeme ORDER BY lexeme
        ON CONFLICT (level, lexeme) DO UPDATE SET df = bm25_terms.df + excluded.df;
      INSERT INTO passage_postings (lexeme, document_id, passage_id, tf, length, impact)
        SELECT lexeme, document_id, id, tf, length, tf / (tf + 1.2 * (0.25 + 0.75 * length / greatest(avgdl, 1)))
        FROM bm25_batch;
    ELSE
      UPDATE bm25_terms t SET df = t.df - c.n
        FROM (SELECT lexeme, count(*) AS n FROM bm25_batch GROUP BY lexeme ORDER BY lexeme) c
        WHERE t.level = 'p' AND t.lexeme = c.lexeme;
      DELETE FROM passage_postings pp USING bm25_batch b
        WHERE pp.lexeme = b.lexeme AND pp.document_id = b.document_id AND pp.passage_id = b.id;
    END IF;
    PERFORM bm25_refresh_documents(array(SELECT DISTINCT document_id FROM bm25_batch ORDER BY 1));
  END IF;
END $$;

-- Recounts documents from scratch: their summary and whatever of their passages is indexed.
-- Documents that no longer exist are only removed.
CREATE FUNCTION bm25_refresh_documents(ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
  removed_body float8;
  removed_summary float8;
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN RETURN; END IF;
  -- Take the level's statistics row first (lock order above), then subtract what was counted.
  SELECT count(*), coalesce(sum(length_body), 0), coalesce(sum(length_summary), 0)
    INTO removed, removed_body, removed_summary
    FROM document_lengths WHERE document_id = ANY(ids);
  UPDATE bm25_stats SET items = items - removed, total_length = total_length - removed_body,
                        total_summary = total_summary - removed_summary
    WHERE level = 'd';
  UPDATE bm25_terms t SET df = t.df - c.n
    FROM (SELECT lexeme, count(*) AS n FROM document_postings WHERE document_id = ANY(ids) GROUP BY lexeme ORDER BY lexeme) c
    WHERE t.level = 'd' AND t.lexeme = c.lexeme;
  DELETE FROM document_postings WHERE document_id = ANY(ids);
  DELETE FROM document_lengths WHERE document_id = ANY(ids);

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
  UPDATE bm25_stats s SET items = s.items + a.n, total_length = s.total_length + a.body, total_summary = s.total_summary + a.summary
    FROM (SELECT count(*) AS n, coalesce(sum(length_body), 0) AS body, coalesce(sum(length_summary), 0) AS summary
          FROM document_lengths WHERE document_id = ANY(ids)) a
    WHERE s.level = 'd';
  INSERT INTO bm25_terms (level, lexeme, df)
    SELECT 'd', lexeme, count(*) FROM bm25_doc_batch GROUP BY lexeme ORDER BY lexeme
    ON CONFLICT (level, lexeme) DO UPDATE SET df = bm25_terms.df + excluded.df;
  INSERT INTO document_postings (lexeme, document_id, tf_body, tf_summary, length_body, length_summary, impact)
    SELECT b.lexeme, b.document_id, b.tf_body, b.tf_summary, l.length_body, l.length_summary,
           (b.tf_body + b.tf_summary) / (b.tf_body + b.tf_summary
             + 1.2 * (0.25 + 0.75 * (l.length_body + l.length_summary) / greatest((s.total_length + s.total_summary) / greatest(s.items, 1), 1)))
    FROM bm25_doc_batch b JOIN document_lengths l USING (document_id) CROSS JOIN bm25_stats s WHERE s.level = 'd';
END $$;

CREATE FUNCTION bm25_passages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bm25_apply_passages(1, array_agg(id), array_agg(document_id), array_agg(search))
    FROM new_rows WHERE search IS NOT NULL HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE FUNCTION bm25_passages_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bm25_apply_passages(-1, array_agg(id), array_agg(document_id), array_agg(search))
    FROM old_rows WHERE search IS NOT NULL HAVING count(*) > 0;
  RETURN NULL;
END $$;

-- Transition tables rule out UPDATE OF search, so rows whose tsvector did not change are skipped here.
CREATE FUNCTION bm25_passages_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM bm25_apply_passages(-1, array_agg(o.id), array_agg(o.document_id), array_agg(o.search))
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.search IS NOT NULL AND (n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id)
    HAVING count(*) > 0;
  PERFORM bm25_apply_passages(1, array_agg(n.id), array_agg(n.document_id), array_agg(n.search))
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE n.search IS NOT NULL AND (n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id)
    HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE FUNCTION bm25_documents_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM bm25_refresh_documents(array(SELECT id FROM old_rows ORDER BY id));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM bm25_refresh_documents(array(
      SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.summary IS DISTINCT FROM o.summary ORDER BY n.id));
  ELSE
    PERFORM bm25_refresh_documents(array(SELECT id FROM new_rows ORDER BY id));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER passages_bm25_insert AFTER INSERT ON passages
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_passages_inserted();
CREATE TRIGGER passages_bm25_delete AFTER DELETE ON passages
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_passages_deleted();
CREATE TRIGGER passages_bm25_update AFTER UPDATE ON passages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_passages_updated();
CREATE TRIGGER documents_bm25_insert AFTER INSERT ON documents
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_documents_changed();
CREATE TRIGGER documents_bm25_update AFTER UPDATE ON documents
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_documents_changed();
CREATE TRIGGER documents_bm25_delete AFTER DELETE ON documents
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_documents_changed();

-- Stores that already hold documents: count them once, now.
SELECT bm25_apply_passages(1, array_agg(id ORDER BY id), array_agg(document_id ORDER BY id), array_agg(search ORDER BY id))
  FROM passages WHERE search IS NOT NULL HAVING count(*) > 0;
SELECT bm25_refresh_documents(array(SELECT id FROM documents ORDER BY id));
