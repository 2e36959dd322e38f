-- A BM25 index (pg_textsearch: block-max WAND over its own postings) for passage BM25's
-- candidates, where the server has one: the embedded PGlite (PostgreSQL 17) ships it; PostgreSQL
-- 15 has none, and there (and on Citus) this migration creates nothing and BM25 stays on the SQL
-- postings of 0007. pg_textsearch indexes a column, not an expression, hence a table of each
-- indexed passage's search text (title path + text, what passages.search is built from), kept by
-- triggers; a passage's row goes with it (ON DELETE CASCADE). The index only chooses candidates:
-- its statistics drift from the postings' (a deleted row stays counted, a restart recounts), so
-- every score returned is the postings' exact BM25 (src/retrieval/statements/bm25.ts).
-- One transaction: a build that dies leaves no index, and searches keep the postings' path.
DO $migration$
BEGIN
  IF current_setting('server_version_num')::int < 170000
     OR NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_textsearch') THEN
    RETURN;
  END IF;
  CREATE EXTENSION IF NOT EXISTS pg_textsearch;

  CREATE TABLE passage_search_texts (
    passage_id  integer PRIMARY KEY REFERENCES passages (id) ON DELETE CASCADE,
    document_id integer NOT NULL,
    search_text text    NOT NULL
  );

  -- Rows written with their tsvector (bulk ingest) or given one later (the indexing step, a
  -- rebuild): the text of every passage the postings hold, no more.
  CREATE FUNCTION passage_search_texts_written() RETURNS trigger LANGUAGE plpgsql AS $f$
  BEGIN
    IF TG_OP = 'UPDATE' THEN
      DELETE FROM passage_search_texts t USING new_rows n WHERE t.passage_id = n.id AND n.search IS NULL;
      INSERT INTO passage_search_texts (passage_id, document_id, search_text)
        SELECT n.id, n.document_id, passage_search_text(n.title_path, n.text)
          FROM new_rows n JOIN old_rows o ON o.id = n.id
         WHERE n.search IS NOT NULL AND (o.search IS NULL OR n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id)
        ON CONFLICT (passage_id) DO UPDATE SET document_id = EXCLUDED.document_id, search_text = EXCLUDED.search_text;
    ELSE
      INSERT INTO passage_search_texts (passage_id, document_id, search_text)
        SELECT id, document_id, passage_search_text(title_path, text) FROM new_rows WHERE search IS NOT NULL;
    END IF;
    RETURN NULL;
  END $f$;
  CREATE TRIGGER passages_search_texts_insert AFTER INSERT ON passages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION passage_search_texts_written();
  CREATE TRIGGER passages_search_texts_update AFTER UPDATE ON passages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION passage_search_texts_written();

  -- A store made before: its indexed passages, then the index over them.
  INSERT INTO passage_search_texts (passage_id, document_id, search_text)
    SELECT id, document_id, passage_search_text(title_path, text) FROM passages WHERE search IS NOT NULL;
  -- k1 and b: the product's defaults (retrieval/types.ts DEFAULT_BM25); another request's k1 and b
  -- change only the exact rescoring, not which candidates the index offers.
  CREATE INDEX passage_search_texts_bm25 ON passage_search_texts USING bm25 (search_text)
    WITH (text_config = 'english', k1 = 0.9, b = 0.6);
END
$migration$;
