-- The postings keys cover what scoring reads, so a probe of one (term, document) pair is an
-- index-only scan of the key. Without it the planner, which takes a lexeme it has no statistics
-- for as a short list, may answer the probe from the covering impact index with a filter on
-- document_id, reading the term's whole posting list once per document (bench:hybrid at 10k:
-- the default mode 49 → 252 ms p50 when its stage-2 BM25 became key probes; docs/benchmarks.md).
-- Same key columns and names: ON CONFLICT targets and the set-based rebuild (which rebuilds keys
-- from the catalog's definitions) are unchanged. One subcommand per ALTER: Citus refuses ADD
-- CONSTRAINT beside another subcommand on a distributed table.
ALTER TABLE passage_postings DROP CONSTRAINT passage_postings_pkey;
ALTER TABLE passage_postings ADD CONSTRAINT passage_postings_pkey PRIMARY KEY (lexeme, document_id, passage_id) INCLUDE (tf, length);
ALTER TABLE document_postings DROP CONSTRAINT document_postings_pkey;
ALTER TABLE document_postings ADD CONSTRAINT document_postings_pkey PRIMARY KEY (lexeme, document_id)
  INCLUDE (tf_body, tf_summary, length_body, length_summary);
