-- Sentence vectors: answer highlights score a passage's sentences against the
-- question; encoding them at query time cost 35–56 ms per retrieval, so they are encoded with the
-- passages (src/pipeline/encode.ts) and stored here, one row per passage and model: a highlight
-- reads the rows of a retrieval's top passages in one statement, by key, and takes their inner
-- products with the question vector in that statement.
--
-- embeddings: the vectors of the passage's first sentences (src/retrieval/sentence-vectors.ts:
-- splitSentences, at most SENTENCE_VECTOR_CAP), in order. split_hash: a hash of those sentences'
-- texts, so a reader whose split differs (the splitter changed since) sees it and encodes instead.
-- Passages are never rewritten in place (a changed document gets new passage rows), so the rows of
-- a changed passage go with it (cascade) and its new rows get new vectors.
CREATE TABLE sentence_embeddings (
  model_id     integer     NOT NULL,
  -- the passage's document: the key leads with it after the model, as on Citus (distribution column)
  document_id  integer     NOT NULL,
  passage_id   integer     NOT NULL,
  split_hash   text        NOT NULL,
  embeddings   vector[]    NOT NULL,
  embedded_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (model_id, document_id, passage_id)
);
-- Kept in the row up to a page (a passage's few sentences), as the passage vectors are (0004);
-- longer lists move out of line.
ALTER TABLE sentence_embeddings ALTER COLUMN embeddings SET STORAGE MAIN;

-- The foreign keys, except where Citus is installed: Citus distributes a table only when no plain
-- table references it, so there migrations/citus/0004 distributes this one first and then adds them
-- (joined on document_id, as passage_embeddings' are).
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
    ALTER TABLE sentence_embeddings ADD FOREIGN KEY (model_id) REFERENCES embedding_models (id) ON DELETE CASCADE;
    ALTER TABLE sentence_embeddings ADD FOREIGN KEY (passage_id) REFERENCES passages (id) ON DELETE CASCADE;
  END IF;
END $$;
