-- Citus only (DHR_DISTRIBUTED=citus): run once on the coordinator after the numbered migrations.
-- The title tree is distributed by document id, every table of it colocated, so DHR's second stage
-- (the passages of the top-k1 documents) and every write of one document stay on one shard.
-- docs/scale-out.md says what changed against the single-node schema and why.

-- DDL below goes to every shard one after another on this transaction's connections.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

-- 1. Triggers come off before distributing (Citus refuses tables with triggers); the Citus ones
--    (0002) run on each shard against its own shard group.
DROP TRIGGER passages_bm25_insert ON passages;
DROP TRIGGER passages_bm25_delete ON passages;
DROP TRIGGER passages_bm25_update ON passages;
DROP TRIGGER documents_bm25_insert ON documents;
DROP TRIGGER documents_bm25_update ON documents;
DROP TRIGGER documents_bm25_delete ON documents;
DROP TRIGGER documents_pending_insert ON documents;
DROP TRIGGER documents_pending_update ON documents;

-- 2. Identity columns: Citus distributes only bigint identities. A sequence owned by the column
--    (pg_get_serial_sequence still finds it, so the writer's up-front id draws are unchanged)
--    keeps the int ids every foreign key and the API use. Ids are drawn on the coordinator only.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['documents', 'sections', 'passages', 'links', 'embedding_models', 'embedding_jobs',
                           'embedding_job_batches', 'feedback', 'query_adapters'] LOOP
    EXECUTE format('ALTER TABLE %I ALTER COLUMN id DROP IDENTITY', t);
    EXECUTE format('CREATE SEQUENCE %I AS integer OWNED BY %I.id', t || '_id_seq', t);
    EXECUTE format('SELECT setval(%L, coalesce((SELECT max(id) FROM %I), 0) + 1, false)', t || '_id_seq', t);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN id SET DEFAULT nextval(%L)', t, t || '_id_seq');
  END LOOP;
END $$;

-- 3. Keys and foreign keys. Citus needs every primary key and unique constraint of a distributed
--    table to hold the distribution column, and foreign keys between distributed tables to join on
--    it. Ids stay unique (one sequence each); only the constraints that say so change.
--    documents.key: unique per document across shards cannot be a constraint; writers of one key
--    serialize on an advisory lock of the key (store/write.ts), so a key still names one document.
ALTER TABLE documents DROP CONSTRAINT documents_key_key;
CREATE INDEX documents_key_idx ON documents (key);

ALTER TABLE sections DROP CONSTRAINT sections_parent_id_fkey;
ALTER TABLE passages DROP CONSTRAINT passages_section_id_fkey;
ALTER TABLE links DROP CONSTRAINT links_passage_id_fkey;
-- A link's target is another document, usually on another shard: no constraint (see docs).
ALTER TABLE links DROP CONSTRAINT links_target_document_id_fkey;
ALTER TABLE passage_embeddings DROP CONSTRAINT passage_embeddings_passage_id_fkey;
-- Feedback names a passage only (no document id to distribute by): a reference table without the
-- constraint. A judgement of a deleted passage stays behind; readers join passages and skip it.
ALTER TABLE feedback DROP CONSTRAINT feedback_passage_id_fkey;

-- Citus distributes a table only when no undistributed table references it, so every other foreign
-- key of the tree comes off here and goes back on after step 5, unchanged (it joins on document
-- id, or points at a reference table).
CREATE TEMP TABLE citus_foreign_keys ON COMMIT DROP AS
  SELECT conrelid::regclass::text AS tbl, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
  WHERE contype = 'f' AND conrelid::regclass::text IN ('sections', 'passages', 'links', 'document_embeddings',
    'passage_embeddings', 'pending_documents', 'active_encoders', 'embedding_jobs', 'embedding_job_batches',
    'query_adapters', 'active_adapter');
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM citus_foreign_keys LOOP
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', r.tbl, r.conname);
  END LOOP;
END $$;

ALTER TABLE sections DROP CONSTRAINT sections_pkey, ADD PRIMARY KEY (document_id, id);
ALTER TABLE passages DROP CONSTRAINT passages_pkey, ADD PRIMARY KEY (document_id, id);
ALTER TABLE links DROP CONSTRAINT links_pkey, ADD PRIMARY KEY (document_id, id);
-- Same name as on one node, so writers can say ON CONFLICT ON CONSTRAINT passage_embeddings_pkey.
ALTER TABLE passage_embeddings DROP CONSTRAINT passage_embeddings_pkey,
  ADD CONSTRAINT passage_embeddings_pkey PRIMARY KEY (model_id, document_id, passage_id);
-- Lookups by id alone (the API's passage(id), links by passage) keep an index.
CREATE INDEX sections_id_idx ON sections (id);
CREATE INDEX passages_id_idx ON passages (id);
CREATE INDEX passage_embeddings_passage_idx ON passage_embeddings (model_id, passage_id);

-- BM25 statistics become per shard group (items, lengths, document frequencies of the documents
-- stored there); retrieval sums them over all shards, so idf and average lengths stay corpus-wide.
ALTER TABLE bm25_stats ADD COLUMN shard_key integer NOT NULL DEFAULT 0;
ALTER TABLE bm25_stats DROP CONSTRAINT bm25_stats_pkey, ADD PRIMARY KEY (shard_key, level);
ALTER TABLE bm25_terms ADD COLUMN shard_key integer NOT NULL DEFAULT 0;
ALTER TABLE bm25_terms DROP CONSTRAINT bm25_terms_pkey, ADD PRIMARY KEY (shard_key, level, lexeme);
-- The single-node rows (zeros on a fresh store) are recounted per shard group after distributing.
DELETE FROM bm25_stats;
DELETE FROM bm25_terms;

-- 4. Reference tables (a copy on every node: joins with any shard stay local): the small tables.
SELECT create_reference_table('embedding_models');
SELECT create_reference_table('active_encoders');
SELECT create_reference_table('embedding_jobs');
SELECT create_reference_table('embedding_job_batches');
SELECT create_reference_table('api_keys');
SELECT create_reference_table('query_adapters');
SELECT create_reference_table('active_adapter');
SELECT create_reference_table('feedback');

-- 5. The title tree, by document, colocated with documents.
SELECT create_distributed_table('documents', 'id');
SELECT create_distributed_table('sections', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('passages', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('links', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('document_embeddings', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('passage_embeddings', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('passage_postings', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('document_postings', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('document_lengths', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('pending_documents', 'document_id', colocate_with => 'documents');
SELECT create_distributed_table('bm25_stats', 'shard_key', colocate_with => 'documents');
SELECT create_distributed_table('bm25_terms', 'shard_key', colocate_with => 'documents');

DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT * FROM citus_foreign_keys LOOP
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I %s', r.tbl, r.conname, r.def);
  END LOOP;
END $$;

-- Foreign keys that now join on the distribution column (colocated, checked on each shard).
ALTER TABLE sections ADD FOREIGN KEY (document_id, parent_id) REFERENCES sections (document_id, id) ON DELETE CASCADE;
ALTER TABLE passages ADD FOREIGN KEY (document_id, section_id) REFERENCES sections (document_id, id) ON DELETE CASCADE;
ALTER TABLE links ADD FOREIGN KEY (document_id, passage_id) REFERENCES passages (document_id, id) ON DELETE CASCADE;
ALTER TABLE passage_embeddings ADD FOREIGN KEY (document_id, passage_id) REFERENCES passages (document_id, id) ON DELETE CASCADE;
