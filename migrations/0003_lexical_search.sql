-- LEXICAL retrieval: PostgreSQL full-text search over each passage with its title path.
-- The tsvector is filled by a separate indexing step (src/store/lexical.ts), not by the document
-- writer: English stemming costs as much as writing the passage itself, and a set-based pass over
-- many documents is cheaper than one per document (bench:ingest shows both).
-- array_to_string is only STABLE in general; on text[] with a constant separator it cannot change,
-- so this wrapper may be IMMUTABLE (usable in expression indexes).
CREATE FUNCTION passage_search_text(title_path text[], body text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_string(title_path, ' ') || ' ' || body $$;

ALTER TABLE passages ADD COLUMN search tsvector;
CREATE INDEX passages_search_idx ON passages USING gin (search);
-- No index for "search IS NULL": it would cost every insert a B-tree entry; indexing a batch goes
-- through (document_id, ordinal), and only start-up looks for stragglers, with one scan.
