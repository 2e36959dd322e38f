-- LEXICAL retrieval: PostgreSQL full-text search over each passage with its title path.
-- array_to_string is only STABLE in general, but on text[] with a constant separator it cannot
-- change, so this wrapper may be IMMUTABLE, as a generated column requires.
CREATE FUNCTION passage_search_text(title_path text[], body text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_string(title_path, ' ') || ' ' || body $$;

ALTER TABLE passages
  ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, passage_search_text(title_path, text))) STORED;
CREATE INDEX passages_search_idx ON passages USING gin (search);
