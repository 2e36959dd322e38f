-- Keep vectors in the row. pgvector's default STORAGE EXTERNAL puts every 512-d vector (2,056
-- bytes, over the 2 kB TOAST threshold) in a separate TOAST table, so exact scoring fetches each
-- one out of line: bench:retrieve measured FLAT exact 8× and HIERARCHICAL ~1.5× slower that way.
-- MAIN (not PLAIN) still lets a very wide vector (say 2,000-d) move out of line rather than fail.
-- Rows written before this migration change layout only after VACUUM FULL.
ALTER TABLE document_embeddings ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE passage_embeddings ALTER COLUMN embedding SET STORAGE MAIN;
