-- The passages of a document by an index alone. HYBRID_HIERARCHICAL's second stage
-- reads the id of every passage of its k1 documents (embedded or not: a passage without a vector
-- still ranks by BM25); the (document_id, ordinal) key sent each of those reads to the table's
-- heap, one page or more a document (bench:hybrid at 100k: 337 of the stage's buffer reads, about
-- 2 ms of a 25 ms question). The same unique key with the id INCLUDEd answers them index-only
-- once the pages are all-visible (autovacuum), and still enforces one passage per ordinal (INCLUDE
-- columns are not part of the key, so ON CONFLICT (document_id, ordinal) still infers it).
-- Citus: a store already distributed keeps its index (its primary key there is (document_id, id),
-- which serves the same reads); a new one is distributed after this.
DO $$
DECLARE
  distributed boolean := false;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    EXECUTE $q$SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'passages'::regclass)$q$ INTO distributed;
  END IF;
  IF distributed THEN RETURN; END IF;
  CREATE UNIQUE INDEX passages_document_ordinal_id ON passages (document_id, ordinal) INCLUDE (id);
  ALTER TABLE passages DROP CONSTRAINT passages_document_id_ordinal_key;
  ALTER INDEX passages_document_ordinal_id RENAME TO passages_document_id_ordinal_key;
  ALTER TABLE passages ADD CONSTRAINT passages_document_id_ordinal_key UNIQUE USING INDEX passages_document_id_ordinal_key;
END $$;
