-- Crash-consistent ingest: which documents may still need the later steps of the pipeline (full-text
-- index, vectors for the active models). A document is recorded by a trigger in the same
-- transaction that writes it, so a process killed after the write leaves the record behind, and
-- whoever runs next (a re-run of ingest, the server at start, a job worker) finishes it and clears
-- the record once the rows show nothing is missing (src/pipeline/pending.ts). Recording it, rather
-- than scanning passages and embeddings for gaps, keeps "what is pending?" a small index scan at
-- any corpus size (readyz and stats ask it often).
--
-- `generation` changes with every write of the document: a finisher clears only the generation it
-- finished, so a re-ingest that lands meanwhile keeps its record.
CREATE SEQUENCE pending_documents_generation_seq;
CREATE TABLE pending_documents (
  document_id  integer     PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
  generation   bigint      NOT NULL DEFAULT nextval('pending_documents_generation_seq'),
  recorded_at  timestamptz NOT NULL DEFAULT now()
);

-- Two triggers because only an UPDATE trigger may name OLD TABLE.
CREATE FUNCTION pending_documents_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pending_documents (document_id) SELECT id FROM new_rows ORDER BY id
    ON CONFLICT (document_id) DO UPDATE SET generation = nextval('pending_documents_generation_seq'), recorded_at = now();
  RETURN NULL;
END $$;
CREATE FUNCTION pending_documents_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO pending_documents (document_id)
    SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.content_hash IS DISTINCT FROM o.content_hash ORDER BY n.id
    ON CONFLICT (document_id) DO UPDATE SET generation = nextval('pending_documents_generation_seq'), recorded_at = now();
  RETURN NULL;
END $$;

CREATE TRIGGER documents_pending_insert AFTER INSERT ON documents
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pending_documents_inserted();
CREATE TRIGGER documents_pending_update AFTER UPDATE ON documents
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pending_documents_updated();

-- Stores that already hold documents: record those with an unindexed passage or a missing vector
-- for the active models (every document while no model is active).
INSERT INTO pending_documents (document_id)
SELECT d.id FROM documents d
WHERE EXISTS (SELECT 1 FROM passages p WHERE p.document_id = d.id AND p.search IS NULL)
   OR NOT EXISTS (SELECT 1 FROM document_embeddings e JOIN active_encoders a ON a.role = 'document' AND a.model_id = e.model_id
                  WHERE e.document_id = d.id AND e.content_hash = d.content_hash)
   OR EXISTS (SELECT 1 FROM passages p WHERE p.document_id = d.id AND NOT EXISTS (
                SELECT 1 FROM passage_embeddings e JOIN active_encoders a ON a.role = 'passage' AND a.model_id = e.model_id
                WHERE e.passage_id = p.id))
ORDER BY d.id;
