-- Citus only: sentence vectors (migration 0018) by document, colocated with their passages, so a
-- highlight's read of a retrieval's top passages and every write of one document stay on its shard.
-- 0018 left out the foreign keys on a database with Citus installed; they go on here, joined on the
-- distribution column as passage_embeddings' are (0001). Runs on a fresh store after 0001–0003,
-- and on a store distributed before 0018 (its table is empty then).
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
SELECT create_distributed_table('sentence_embeddings', 'document_id', colocate_with => 'documents');
ALTER TABLE sentence_embeddings ADD FOREIGN KEY (model_id) REFERENCES embedding_models (id) ON DELETE CASCADE;
ALTER TABLE sentence_embeddings ADD FOREIGN KEY (document_id, passage_id) REFERENCES passages (document_id, id) ON DELETE CASCADE;
