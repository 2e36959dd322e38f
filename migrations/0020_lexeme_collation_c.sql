-- BM25's lexeme columns compared byte by byte. Under the database's default
-- collation (C.UTF-8 here) every B-tree comparison of a lexeme goes through strcoll: inserting the
-- postings of a bulk ingest into their keys and impact indexes, and the (lexeme, document) probes
-- of HYBRID_HIERARCHICAL's second stage. COLLATE "C" compares with memcmp. Lexemes are UTF-8, whose
-- byte order is code-point order, the order C.UTF-8 sorts in, so every ORDER BY lexeme (lock order
-- of the statistics' upserts, a question's term numbering) is unchanged; equality is byte equality
-- under both. Queries need no change: a lexeme from to_tsvector / unnest(tsvector) or a text
-- parameter has the default collation, which yields to the column's, so the indexes still serve.
-- Text → text is binary coercible: the tables are not rewritten, only their indexes rebuilt
-- (docs/operations.md). The set-based rebuild's new tables copy the columns (LIKE), collation
-- included. Citus: a store already distributed keeps its collation (its shards' views depend on
-- the columns); a new one is distributed after this, with the columns as here.
DO $$
DECLARE
  distributed boolean := false;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    EXECUTE $q$SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'passage_postings'::regclass)$q$ INTO distributed;
  END IF;
  IF distributed THEN RETURN; END IF;
  ALTER TABLE passage_postings ALTER COLUMN lexeme TYPE text COLLATE "C";
  ALTER TABLE document_postings ALTER COLUMN lexeme TYPE text COLLATE "C";
  ALTER TABLE bm25_terms ALTER COLUMN lexeme TYPE text COLLATE "C";
END $$;
